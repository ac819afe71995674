#include "deviceplugin/server.h"

#include <google/protobuf/util/message_differencer.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "deviceplugin/allocate.h"
#include "deviceplugin/preferred.h"

namespace railyard::deviceplugin {
namespace {

std::vector<std::string> ids_of(const google::protobuf::RepeatedPtrField<std::string>& r) {
  return {r.begin(), r.end()};
}

}  // namespace

std::string socket_name_for(const std::string& resource) {
  std::string s = resource;
  std::replace(s.begin(), s.end(), '/', '_');
  return s + ".sock";
}

v1beta1::ListAndWatchResponse device_list(const Snapshot& snap) {
  v1beta1::ListAndWatchResponse out;
  for (const auto& d : snap.pool.devices) {
    auto* dev = out.add_devices();
    dev->set_id(d.id);
    auto h = snap.health.find(d.id);
    dev->set_health(h == snap.health.end() || h->second.healthy ? "Healthy" : "Unhealthy");
    if (d.numa >= 0) dev->mutable_topology()->add_nodes()->set_id(d.numa);
  }
  return out;
}

ResourceServer::ResourceServer(std::string resource, std::filesystem::path dir,
                               std::filesystem::path devinfo_dir, Metrics& metrics)
    : resource_(std::move(resource)),
      dir_(std::move(dir)),
      devinfo_dir_(std::move(devinfo_dir)),
      metrics_(metrics) {}

ResourceServer::~ResourceServer() {
  stop();
}

std::shared_ptr<const Snapshot> ResourceServer::snapshot() const {
  std::lock_guard lk(mu_);
  return snap_;
}

void ResourceServer::update(std::shared_ptr<const Snapshot> snap) {
  auto list = device_list(*snap);
  std::lock_guard lk(mu_);
  snap_ = std::move(snap);
  if (generation_ != 0 && google::protobuf::util::MessageDifferencer::Equals(list, list_)) return;
  list_ = std::move(list);
  ++generation_;
  changed_.notify_all();
}

void ResourceServer::start() {
  if (serving()) return;
  const auto path = socket_path();
  ::unlink(path.c_str());  // a socket left by an earlier run
  {
    std::lock_guard lk(mu_);
    stopping_ = false;
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + path.string(), grpc::InsecureServerCredentials());
  builder.RegisterService(this);
  auto server = builder.BuildAndStart();
  if (!server) throw std::runtime_error("cannot serve " + resource_ + " on " + path.string());
  std::lock_guard lk(mu_);
  server_ = std::move(server);
}

void ResourceServer::stop() {
  std::unique_ptr<grpc::Server> server;
  {
    std::lock_guard lk(mu_);
    if (!server_) return;
    stopping_ = true;
    changed_.notify_all();
    server = std::move(server_);
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server->Wait();
  ::unlink(socket_path().c_str());
}

bool ResourceServer::serving() const {
  std::lock_guard lk(mu_);
  return server_ != nullptr;
}

grpc::Status ResourceServer::GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                                    v1beta1::DevicePluginOptions* out) {
  out->set_pre_start_required(false);
  out->set_get_preferred_allocation_available(true);
  return grpc::Status::OK;
}

grpc::Status ResourceServer::ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty*,
                                          grpc::ServerWriter<v1beta1::ListAndWatchResponse>* w) {
  uint64_t sent = 0;
  std::unique_lock lk(mu_);
  while (!stopping_ && !ctx->IsCancelled()) {
    if (sent != generation_) {
      const auto list = list_;
      sent = generation_;
      lk.unlock();
      if (!w->Write(list)) return grpc::Status::OK;  // the kubelet went away
      lk.lock();
      continue;
    }
    // Woken by update() or stop(); the timeout only notices a cancelled stream.
    changed_.wait_for(lk, std::chrono::milliseconds(500));
  }
  return grpc::Status::OK;
}

grpc::Status ResourceServer::GetPreferredAllocation(grpc::ServerContext*,
                                                    const v1beta1::PreferredAllocationRequest* req,
                                                    v1beta1::PreferredAllocationResponse* out) {
  const auto snap = snapshot();
  try {
    for (const auto& c : req->container_requests()) {
      const auto ids =
          preferred_allocation(snap->pool, *snap->node, ids_of(c.available_deviceids()),
                               ids_of(c.must_include_deviceids()), c.allocation_size());
      auto* r = out->add_container_responses();
      for (const auto& id : ids) r->add_deviceids(id);
    }
  } catch (const AllocateError& e) {
    spdlog::warn("GetPreferredAllocation: {}", e.what());
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  }
  return grpc::Status::OK;
}

grpc::Status ResourceServer::Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* req,
                                      v1beta1::AllocateResponse* out) {
  const auto snap = snapshot();
  std::vector<ContainerAllocation> allocs;
  try {
    // Every container is checked before anything is written: all or nothing.
    for (const auto& c : req->container_requests())
      allocs.push_back(
          build_allocation(snap->pool, *snap->node, *snap->config, ids_of(c.devices_ids())));
    for (const auto& a : allocs) write_devinfo(devinfo_dir_, a.devinfo);
  } catch (const AllocateError& e) {
    metrics_.count_allocate_error(resource_);
    spdlog::warn("Allocate: {}", e.what());
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::exception& e) {
    metrics_.count_allocate_error(resource_);
    spdlog::error("Allocate: {}", e.what());
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
  size_t n = 0;
  for (int i = 0; i < req->container_requests_size(); ++i) {
    const auto& a = allocs[static_cast<size_t>(i)];
    auto* r = out->add_container_responses();
    r->mutable_envs()->insert(a.envs.begin(), a.envs.end());
    for (const auto& d : a.devices) {
      auto* spec = r->add_devices();
      spec->set_container_path(d.path);
      spec->set_host_path(d.path);
      spec->set_permissions(d.permissions);
    }
    for (const auto& name : a.cdi_devices) r->add_cdi_devices()->set_name(name);
    n += static_cast<size_t>(req->container_requests(i).devices_ids_size());
  }
  metrics_.count_allocation(resource_, n);
  spdlog::info("Allocate {}: {} device(s) for {} container(s)", resource_, n,
               req->container_requests_size());
  return grpc::Status::OK;
}

grpc::Status ResourceServer::PreStartContainer(grpc::ServerContext*,
                                               const v1beta1::PreStartContainerRequest*,
                                               v1beta1::PreStartContainerResponse*) {
  return grpc::Status::OK;
}

}  // namespace railyard::deviceplugin
