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

// One ListAndWatch stream. It writes the latest list whenever the server's generation moved
// past what it sent; gRPC calls are never made while a lock is held. Shared ownership: the
// server's set holds it until OnDone, and update() holds it while it pushes, so a stream that
// ends during an update is never touched after it is gone.
class ListWatcher final : public grpc::ServerWriteReactor<v1beta1::ListAndWatchResponse> {
 public:
  explicit ListWatcher(ResourceServer& s) : s_(s) {}

  // Sends the server's list if it is newer than what this stream sent.
  void push() {
    {
      std::lock_guard lk(s_.mu_);
      std::lock_guard wl(mu_);
      if (writing_ || done_ || sent_ == s_.generation_) return;
      msg_ = s_.list_;
      sent_ = s_.generation_;
      writing_ = true;
    }
    StartWrite(&msg_);
  }
  // Ends the stream once no write is in flight.
  void end() {
    {
      std::lock_guard wl(mu_);
      if (done_) return;
      done_ = true;
      if (writing_) return;  // OnWriteDone finishes
    }
    Finish(grpc::Status::OK);
  }

  void OnWriteDone(bool ok) override {
    bool finish = false;
    {
      std::lock_guard wl(mu_);
      writing_ = false;
      if (!ok) done_ = true;  // the kubelet went away
      finish = done_;
    }
    if (finish)
      Finish(grpc::Status::OK);
    else
      push();
  }
  void OnCancel() override { end(); }
  void OnDone() override {
    {
      std::lock_guard wl(mu_);
      done_ = true;
    }
    s_.forget(this);  // may destroy this: nothing after it
  }

 private:
  ResourceServer& s_;
  std::mutex mu_;
  v1beta1::ListAndWatchResponse msg_;
  uint64_t sent_ = 0;
  bool writing_ = false, done_ = false;
};

class ResourceServer::Service final : public v1beta1::DevicePlugin::CallbackService {
 public:
  explicit Service(ResourceServer& s) : s_(s) {}

  grpc::ServerUnaryReactor* GetDevicePluginOptions(grpc::CallbackServerContext* ctx,
                                                   const v1beta1::Empty*,
                                                   v1beta1::DevicePluginOptions* out) override {
    out->set_pre_start_required(false);
    out->set_get_preferred_allocation_available(true);
    return finish(ctx, grpc::Status::OK);
  }
  grpc::ServerWriteReactor<v1beta1::ListAndWatchResponse>* ListAndWatch(
      grpc::CallbackServerContext*, const v1beta1::Empty*) override {
    return s_.watch();
  }
  grpc::ServerUnaryReactor* GetPreferredAllocation(
      grpc::CallbackServerContext* ctx, const v1beta1::PreferredAllocationRequest* req,
      v1beta1::PreferredAllocationResponse* out) override {
    return finish(ctx, s_.preferred(*req, *out));
  }
  grpc::ServerUnaryReactor* Allocate(grpc::CallbackServerContext* ctx,
                                     const v1beta1::AllocateRequest* req,
                                     v1beta1::AllocateResponse* out) override {
    return finish(ctx, s_.allocate(*req, *out));
  }
  grpc::ServerUnaryReactor* PreStartContainer(grpc::CallbackServerContext* ctx,
                                              const v1beta1::PreStartContainerRequest*,
                                              v1beta1::PreStartContainerResponse*) override {
    return finish(ctx, grpc::Status::OK);
  }

 private:
  static grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* ctx, grpc::Status st) {
    auto* r = ctx->DefaultReactor();
    r->Finish(std::move(st));
    return r;
  }
  ResourceServer& s_;
};

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
  std::vector<std::shared_ptr<ListWatcher>> watchers;
  {
    std::lock_guard lk(mu_);
    snap_ = std::move(snap);
    if (generation_ != 0 && google::protobuf::util::MessageDifferencer::Equals(list, list_)) return;
    list_ = std::move(list);
    ++generation_;
    for (const auto& [raw, w] : watchers_) watchers.push_back(w);
  }
  for (const auto& w : watchers) w->push();
}

ListWatcher* ResourceServer::watch() {
  auto w = std::make_shared<ListWatcher>(*this);
  {
    std::lock_guard lk(mu_);
    watchers_.emplace(w.get(), w);
  }
  w->push();
  return w.get();
}

void ResourceServer::forget(ListWatcher* w) {
  std::shared_ptr<ListWatcher> last;  // released after the lock
  std::lock_guard lk(mu_);
  auto it = watchers_.find(w);
  if (it != watchers_.end()) {
    last = std::move(it->second);
    watchers_.erase(it);
  }
  watchers_gone_.notify_all();
}

void ResourceServer::start() {
  if (serving()) return;
  const auto path = socket_path();
  ::unlink(path.c_str());  // a socket left by an earlier run
  auto service = std::make_unique<Service>(*this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + path.string(), grpc::InsecureServerCredentials());
  builder.RegisterService(service.get());
  auto server = builder.BuildAndStart();
  if (!server) throw std::runtime_error("cannot serve " + resource_ + " on " + path.string());
  std::lock_guard lk(mu_);
  service_ = std::move(service);
  server_ = std::move(server);
}

void ResourceServer::stop() {
  std::unique_ptr<grpc::Server> server;
  std::vector<std::shared_ptr<ListWatcher>> watchers;
  {
    std::lock_guard lk(mu_);
    if (!server_) return;
    server = std::move(server_);
    for (const auto& [raw, w] : watchers_) watchers.push_back(w);
  }
  for (const auto& w : watchers) w->end();
  watchers.clear();
  // Streams end at once unless a write is stuck on a kubelet that stopped reading; the
  // deadline cancels whatever is left, so a DaemonSet rollout never waits on the kubelet.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  server->Wait();
  {
    // Every reactor is done before the service they call into goes.
    std::unique_lock lk(mu_);
    watchers_gone_.wait(lk, [&] { return watchers_.empty(); });
    service_.reset();
  }
  ::unlink(socket_path().c_str());
}

bool ResourceServer::serving() const {
  std::lock_guard lk(mu_);
  return server_ != nullptr;
}

grpc::Status ResourceServer::preferred(const v1beta1::PreferredAllocationRequest& req,
                                       v1beta1::PreferredAllocationResponse& out) const {
  const auto snap = snapshot();
  try {
    for (const auto& c : req.container_requests()) {
      const auto ids =
          preferred_allocation(snap->pool, *snap->node, ids_of(c.available_deviceids()),
                               ids_of(c.must_include_deviceids()), c.allocation_size());
      auto* r = out.add_container_responses();
      for (const auto& id : ids) r->add_deviceids(id);
    }
  } catch (const AllocateError& e) {
    spdlog::warn("GetPreferredAllocation: {}", e.what());
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  }
  return grpc::Status::OK;
}

grpc::Status ResourceServer::allocate(const v1beta1::AllocateRequest& req,
                                      v1beta1::AllocateResponse& out) {
  const auto snap = snapshot();
  std::vector<ContainerAllocation> allocs;
  try {
    // Every container is checked before anything is written: all or nothing.
    for (const auto& c : req.container_requests())
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
  for (int i = 0; i < req.container_requests_size(); ++i) {
    const auto& a = allocs[static_cast<size_t>(i)];
    auto* r = out.add_container_responses();
    r->mutable_envs()->insert(a.envs.begin(), a.envs.end());
    for (const auto& d : a.devices) {
      auto* spec = r->add_devices();
      spec->set_container_path(d.path);
      spec->set_host_path(d.path);
      spec->set_permissions(d.permissions);
    }
    for (const auto& name : a.cdi_devices) r->add_cdi_devices()->set_name(name);
    n += static_cast<size_t>(req.container_requests(i).devices_ids_size());
  }
  metrics_.count_allocation(resource_, n);
  spdlog::info("Allocate {}: {} device(s) for {} container(s)", resource_, n,
               req.container_requests_size());
  return grpc::Status::OK;
}

}  // namespace railyard::deviceplugin
