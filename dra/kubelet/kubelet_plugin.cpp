#include "dra/kubelet/kubelet_plugin.h"

#include <grpcpp/grpcpp.h>
#include <net/if.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include "common/atomic_file.h"
#include "common/k8s_names.h"
#include "common/log_escape.h"
#include "dra/api/dra.grpc.pb.h"
#include "dra/api/dra_health.grpc.pb.h"
#include "dra/api/pluginregistration.grpc.pb.h"

namespace railyard::dra {

namespace fs = std::filesystem;
using nlohmann::json;
namespace drapb = k8s::io::kubelet::pkg::apis::dra::v1;
namespace healthpb = ::v1alpha1;

namespace {

// How often an open health stream looks at the feed, how often it repeats itself when nothing
// changed, and how long the kubelet may trust a report: a driver that died shows Unknown after
// a minute instead of the kubelet's 30 s default, which a heartbeat of 10 s keeps well clear of.
constexpr auto kHealthPoll = std::chrono::seconds(1);
constexpr auto kHealthHeartbeat = std::chrono::seconds(10);
constexpr int64_t kHealthTimeoutS = 60;

std::vector<ClaimedNic> nics_of(const PreparedClaim& c) {
  std::vector<ClaimedNic> out;
  for (const auto& d : c.devices)
    if (d.type != to_string(DeviceType::kGpu))
      out.push_back({c.uid, c.ref(), d.name, d.pci, d.rail});
  return out;
}

}  // namespace

// The kubelet's plugin watcher asks what is behind the socket it found, then says whether it
// took it.
class KubeletPlugin::Registration final : public pluginregistration::Registration::Service {
 public:
  explicit Registration(std::string endpoint) : endpoint_(std::move(endpoint)) {}
  grpc::Status GetInfo(grpc::ServerContext*, const pluginregistration::InfoRequest*,
                       pluginregistration::PluginInfo* out) override {
    out->set_type("DRAPlugin");
    out->set_name(kDriverName);
    out->set_endpoint(endpoint_);
    out->add_supported_versions("v1.DRAPlugin");
    return grpc::Status::OK;
  }
  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*,
                                        const pluginregistration::RegistrationStatus* st,
                                        pluginregistration::RegistrationStatusResponse*) override {
    if (st->plugin_registered())
      spdlog::info("kubelet: plugin {} registered (endpoint {})", kDriverName, endpoint_);
    else
      spdlog::error("kubelet: plugin {} not registered: {}", kDriverName, st->error());
    return grpc::Status::OK;
  }

 private:
  std::string endpoint_;
};

class KubeletPlugin::DraService final : public drapb::DRAPlugin::Service {
 public:
  explicit DraService(KubeletPlugin& p) : p_(p) {}
  grpc::Status NodePrepareResources(grpc::ServerContext*,
                                    const drapb::NodePrepareResourcesRequest* req,
                                    drapb::NodePrepareResourcesResponse* out) override {
    std::vector<ClaimRef> refs;
    for (const auto& c : req->claims()) refs.push_back({c.namespace_(), c.uid(), c.name()});
    for (const auto& [uid, r] : p_.prepare(refs)) {
      auto& claim = (*out->mutable_claims())[uid];
      if (!r.error.empty()) {
        claim.set_error(r.error);
        continue;
      }
      for (const auto& d : r.devices) {
        auto* dev = claim.add_devices();
        dev->add_request_names(d.request);
        dev->set_pool_name(p_.options_.prepare.pool);
        dev->set_device_name(d.name);
        for (const auto& id : d.cdi_ids) dev->add_cdi_device_ids(id);
      }
    }
    return grpc::Status::OK;
  }
  grpc::Status NodeUnprepareResources(grpc::ServerContext*,
                                      const drapb::NodeUnprepareResourcesRequest* req,
                                      drapb::NodeUnprepareResourcesResponse* out) override {
    std::vector<ClaimRef> refs;
    for (const auto& c : req->claims()) refs.push_back({c.namespace_(), c.uid(), c.name()});
    for (const auto& [uid, error] : p_.unprepare(refs))
      (*out->mutable_claims())[uid].set_error(error);
    return grpc::Status::OK;
  }

 private:
  KubeletPlugin& p_;
};

// The kubelet's resource health stream (KEP-4680): every device's health when it changes, and
// again every kHealthHeartbeat, until the kubelet hangs up or the plugin stops.
class KubeletPlugin::HealthService final : public healthpb::DRAResourceHealth::Service {
 public:
  explicit HealthService(KubeletPlugin& p) : p_(p) {}
  grpc::Status NodeWatchResources(
      grpc::ServerContext* ctx, const healthpb::NodeWatchResourcesRequest*,
      grpc::ServerWriter<healthpb::NodeWatchResourcesResponse>* out) override {
    spdlog::info("kubelet plugin: the kubelet opened the devices' health stream");
    uint64_t sent = 0;
    std::chrono::steady_clock::time_point last{};
    while (!ctx->IsCancelled() && !p_.health_.closed()) {
      const auto snap = p_.health_.wait_after(sent, kHealthPoll);
      const auto now = std::chrono::steady_clock::now();
      if (snap.version == 0 || (snap.version == sent && now - last < kHealthHeartbeat)) continue;
      healthpb::NodeWatchResourcesResponse r;
      const int64_t t = std::time(nullptr);
      for (const auto& h : snap.reports) {
        auto* d = r.add_devices();
        d->mutable_device()->set_pool_name(p_.options_.prepare.pool);
        d->mutable_device()->set_device_name(h.device);
        d->set_health(h.healthy ? healthpb::HEALTHY : healthpb::UNHEALTHY);
        d->set_last_updated_time(t);
        d->set_health_check_timeout_seconds(kHealthTimeoutS);
        d->set_message(h.message);
      }
      if (!out->Write(r)) break;
      if (snap.version != sent)
        spdlog::debug("kubelet plugin: health of {} devices sent (version {})", r.devices_size(),
                      snap.version);
      sent = snap.version;
      last = now;
    }
    return grpc::Status::OK;
  }

 private:
  KubeletPlugin& p_;
};

KubeletPlugin::KubeletPlugin(PluginOptions options, ClaimGetter get_claim)
    : options_(std::move(options)), get_claim_(std::move(get_claim)) {
  if (!options_.netdev_in_host)
    options_.netdev_in_host = [](const std::string& n) { return ::if_nametoindex(n.c_str()) != 0; };
}

KubeletPlugin::~KubeletPlugin() {
  stop();
}

fs::path KubeletPlugin::claim_file(const std::string& uid) const {
  return options_.state_dir / "claims" / (uid + ".json");
}

fs::path KubeletPlugin::cdi_file(const std::string& uid) const {
  return options_.cdi_dir / ("railyard.io-claim_" + uid + ".json");
}

fs::path KubeletPlugin::registration_socket() const {
  return options_.registry_dir / (std::string(kDriverName) + "-reg.sock");
}

fs::path KubeletPlugin::endpoint() const {
  return options_.plugin_dir / "dra.sock";
}

size_t KubeletPlugin::load_state() {
  std::lock_guard lk(mu_);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options_.state_dir / "claims", ec)) {
    if (e.path().extension() != ".json" || e.path().filename().string().front() == '.') continue;
    try {
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      auto c = PreparedClaim::from_json(json::parse(ss.str()));
      if (!is_uid(c.uid))
        throw std::runtime_error("its uid '" + escape_controls(c.uid) + "' is not one");
      // The records live on disk, the CDI directory on tmpfs: after a reboot the runtime would be
      // handed CDI names whose specs are gone. Each spec is written again from its record.
      if (!c.cdi_spec.empty())
        write_file_atomically(cdi_file(c.uid), c.cdi_spec.dump(2) + "\n", 0644);
      claims_[c.uid] = std::move(c);
    } catch (const std::exception& ex) {
      spdlog::error("state {}: {}; left as it is", e.path().string(), ex.what());
    }
  }
  return claims_.size();
}

void KubeletPlugin::update_node(std::shared_ptr<const topology::Node> node,
                                std::vector<Device> devices) {
  health_.update(devices);
  std::lock_guard lk(mu_);
  node_ = std::move(node);
  devices_ = std::move(devices);
}

std::vector<PreparedClaim> KubeletPlugin::claims() const {
  std::lock_guard lk(mu_);
  std::vector<PreparedClaim> out;
  for (const auto& [uid, c] : claims_) out.push_back(c);
  return out;
}

std::map<std::string, PrepareResult> KubeletPlugin::prepare(const std::vector<ClaimRef>& claims) {
  std::map<std::string, PrepareResult> out;
  for (const auto& ref : claims) out[ref.uid] = prepare_one(ref);
  return out;
}

std::map<std::string, std::string> KubeletPlugin::unprepare(const std::vector<ClaimRef>& claims) {
  std::map<std::string, std::string> out;
  for (const auto& ref : claims) out[ref.uid] = unprepare_one(ref);
  return out;
}

namespace {

// Why the kubelet's reference to a claim cannot be used, or "".
std::string check_ref(const ClaimRef& ref) {
  if (!is_uid(ref.uid)) return "the claim's uid '" + escape_controls(ref.uid) + "' is not a UID";
  if (!is_dns1123_label(ref.ns))
    return "the claim's namespace '" + escape_controls(ref.ns) + "' is not a namespace name";
  if (!is_dns1123_subdomain(ref.name))
    return "the claim's name '" + escape_controls(ref.name) + "' is not an object name";
  return "";
}

}  // namespace

PrepareResult KubeletPlugin::prepare_one(const ClaimRef& ref) {
  // The UID becomes file names, the namespace and name an API path: checked before either.
  if (const std::string bad = check_ref(ref); !bad.empty()) {
    spdlog::warn("prepare: {}", bad);
    return {{}, bad};
  }
  const std::string what = "claim " + ref.ns + "/" + ref.name + " (" + ref.uid + ")";
  {
    std::lock_guard lk(mu_);
    if (auto it = claims_.find(ref.uid); it != claims_.end()) {
      spdlog::info("prepare {}: prepared already, {} devices", what, it->second.devices.size());
      return {it->second.devices, ""};
    }
  }
  try {
    // Read without the lock: the API server may take its time, and Unprepare, the node's
    // updates and other claims must not wait for it.
    json claim;
    try {
      claim = get_claim_(ref.ns, ref.name);
    } catch (const std::exception& e) {
      throw PrepareError(std::string("cannot read the claim: ") + e.what());
    }
    std::lock_guard lk(mu_);
    if (auto it = claims_.find(ref.uid); it != claims_.end()) {  // prepared meanwhile
      spdlog::info("prepare {}: prepared already, {} devices", what, it->second.devices.size());
      return {it->second.devices, ""};
    }
    if (!node_) throw PrepareError("the node's devices have not been read yet");
    PreparedClaim c = prepare_claim(claim, ref.uid, *node_, devices_, options_.prepare);
    std::set<std::string> mine;
    for (const auto& d : c.devices) mine.insert(d.name);
    for (const auto& d : devices_) {
      if (d.type == DeviceType::kGpu || !mine.count(d.name)) continue;
      const std::string netdev = node_->function(d.fn).netdev_name();
      if (!netdev.empty() && !options_.netdev_in_host(netdev))
        throw PrepareError("device " + d.name + " (" + netdev +
                           ") is not in the host network namespace: a pod holds it already. Was "
                           "it given out by the device plugin before the node was labelled "
                           "railyard.io/allocator=dra? Such pods must go first");
    }
    // A device is prepared for one claim at a time: the scheduler never allocates one twice,
    // so a clash means a claim this driver still holds was not unprepared.
    for (const auto& [uid, other] : claims_)
      for (const auto& d : other.devices)
        if (mine.count(d.name))
          throw PrepareError("device " + d.name + " is still prepared for claim " + other.ref() +
                             " (" + uid + ")");
    // The record first, durably: whatever happens after it, Unprepare knows what to remove.
    write_file_atomically(claim_file(c.uid), c.to_json().dump(2) + "\n", 0600, true);
    try {
      write_file_atomically(cdi_file(c.uid), c.cdi_spec.dump(2) + "\n", 0644);
      for (const auto& pod : c.pods) write_pod_claim(options_.state_dir, pod, c.uid, nics_of(c));
    } catch (...) {
      remove_file(cdi_file(c.uid));
      for (const auto& pod : c.pods) remove_pod_claim(options_.state_dir, pod, c.uid);
      remove_file(claim_file(c.uid));
      throw;
    }
    std::string names;
    for (const auto& d : c.devices) names += (names.empty() ? "" : " ") + d.name;
    spdlog::info("prepare {}: {} devices for {} pod(s): {}", what, c.devices.size(), c.pods.size(),
                 names);
    auto devices = c.devices;
    claims_[c.uid] = std::move(c);
    return {devices, ""};
  } catch (const std::exception& e) {
    spdlog::warn("prepare {}: {}", what, e.what());
    return {{}, e.what()};
  }
}

std::string KubeletPlugin::unprepare_one(const ClaimRef& ref) {
  if (!is_uid(ref.uid)) {  // no claim of ours has such a UID; its files could be anywhere
    spdlog::warn("unprepare: the claim's uid '{}' is not a UID", ref.uid);
    return "the claim's uid '" + escape_controls(ref.uid) + "' is not a UID";
  }
  const std::string what = "claim " + ref.ns + "/" + ref.name + " (" + ref.uid + ")";
  std::lock_guard lk(mu_);
  const auto it = claims_.find(ref.uid);
  try {
    // What a crash mid-Prepare can leave without a record goes too: the CDI spec is named by UID.
    remove_file(cdi_file(ref.uid));
    if (it == claims_.end()) {
      remove_file(claim_file(ref.uid));
      spdlog::info("unprepare {}: not prepared here (already unprepared)", what);
      return "";
    }
    for (const auto& pod : it->second.pods) remove_pod_claim(options_.state_dir, pod, ref.uid);
    remove_file(claim_file(ref.uid));
    spdlog::info("unprepare {}: {} devices returned", what, it->second.devices.size());
    claims_.erase(it);
    return "";
  } catch (const std::exception& e) {
    spdlog::warn("unprepare {}: {}", what, e.what());
    return e.what();
  }
}

void KubeletPlugin::start() {
  if (dra_server_) return;
  std::error_code ec;
  for (const auto& d : {options_.plugin_dir, options_.registry_dir}) {
    fs::create_directories(d, ec);
    if (ec) throw std::runtime_error("cannot create " + d.string() + ": " + ec.message());
  }
  service_ = std::make_unique<DraService>(*this);
  health_service_ = std::make_unique<HealthService>(*this);
  registration_ = std::make_unique<Registration>(endpoint().string());
  // The DRA service first: the kubelet calls it as soon as the registration socket answers.
  ::unlink(endpoint().c_str());
  grpc::ServerBuilder dra;
  dra.AddListeningPort("unix:" + endpoint().string(), grpc::InsecureServerCredentials());
  dra.RegisterService(service_.get());
  dra.RegisterService(health_service_.get());
  dra_server_ = dra.BuildAndStart();
  if (!dra_server_) throw std::runtime_error("cannot serve the DRA API on " + endpoint().string());
  ::unlink(registration_socket().c_str());
  grpc::ServerBuilder reg;
  reg.AddListeningPort("unix:" + registration_socket().string(), grpc::InsecureServerCredentials());
  reg.RegisterService(registration_.get());
  reg_server_ = reg.BuildAndStart();
  if (!reg_server_) {
    stop();
    throw std::runtime_error("cannot serve plugin registration on " +
                             registration_socket().string());
  }
  spdlog::info(
      "kubelet plugin: registration at {}, DRA service v1.DRAPlugin and device health "
      "v1alpha1.DRAResourceHealth at {}",
      registration_socket().string(), endpoint().string());
}

void KubeletPlugin::stop() {
  health_.close();  // open health streams return, so that the server's shutdown need not wait
  // The registration socket first: the kubelet stops sending work before the service goes.
  for (auto* s : {&reg_server_, &dra_server_}) {
    if (!*s) continue;
    (*s)->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    (*s)->Wait();
    s->reset();
  }
  if (registration_) ::unlink(registration_socket().c_str());
  if (service_) ::unlink(endpoint().c_str());
  registration_.reset();
  service_.reset();
  health_service_.reset();
}

}  // namespace railyard::dra
