// The DRA kubelet plugin: registration with the kubelet's plugin watcher (a socket in
// plugins_registry/ answering GetInfo), the v1.DRAPlugin service the kubelet calls before a
// pod that uses a claim starts (NodePrepareResources) and after it is gone
// (NodeUnprepareResources), and the v1alpha1.DRAResourceHealth stream through which the kubelet
// shows a device's health in the status of the pods that hold it (KEP-4680). Prepare reads the
// claim from the API server, finds its devices in the node model the publisher keeps current,
// writes the CDI spec the runtime applies, leaves the claim's NICs for railyard-cni (dra/handoff.h)
// and records the claim on disk, so that a restarted driver still unprepares what it prepared.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dra/handoff/handoff.h"
#include "dra/kubelet/health_feed.h"
#include "dra/slices/prepare.h"
#include "dra/slices/slices.h"
#include "topology/model/node.h"

namespace grpc {
class Server;
}

namespace railyard::dra {

struct PluginOptions {
  std::filesystem::path registry_dir = "/var/lib/kubelet/plugins_registry";
  std::filesystem::path plugin_dir = "/var/lib/kubelet/plugins/railyard.io";
  std::filesystem::path cdi_dir = "/var/run/cdi";
  std::filesystem::path state_dir = kDefaultHandoffDir;  // claims/, pods/, net/
  PrepareOptions prepare;
  // Whether a NIC's netdev is in the host network namespace, free for a pod; unset: the
  // kernel's answer (if_nametoindex). A NIC a pod holds already (the device plugin gave it out
  // before the node went to DRA) is refused at Prepare instead of failing in the CNI.
  std::function<bool(const std::string& netdev)> netdev_in_host;
};

struct ClaimRef {
  std::string ns, uid, name;
};

struct PrepareResult {
  std::vector<PreparedDevice> devices;
  std::string error;  // non-empty: not prepared
};

// Gets a ResourceClaim from the API server; throws with the server's message.
using ClaimGetter = std::function<nlohmann::json(const std::string& ns, const std::string& name)>;

class KubeletPlugin {
 public:
  KubeletPlugin(PluginOptions options, ClaimGetter get_claim);
  ~KubeletPlugin();
  KubeletPlugin(const KubeletPlugin&) = delete;
  KubeletPlugin& operator=(const KubeletPlugin&) = delete;

  // The claims prepared before a restart, from state_dir/claims. Returns how many; a file that
  // cannot be read is logged and left for a person to look at.
  size_t load_state();
  // The node as the publisher read it last; Prepare looks devices up here.
  void update_node(std::shared_ptr<const topology::Node> node, std::vector<Device> devices);

  // The RPCs without gRPC. Prepare of a claim already prepared answers as before (the kubelet
  // asks again after its own restart); Unprepare of an unknown claim succeeds.
  std::map<std::string, PrepareResult> prepare(const std::vector<ClaimRef>& claims);
  std::map<std::string, std::string> unprepare(const std::vector<ClaimRef>& claims);

  std::vector<PreparedClaim> claims() const;

  // Serves both sockets (stale ones replaced). Throws std::runtime_error.
  void start();
  void stop();  // idempotent; removes the sockets
  std::filesystem::path registration_socket() const;
  std::filesystem::path endpoint() const;

 private:
  class Registration;
  class DraService;
  class HealthService;
  PrepareResult prepare_one(const ClaimRef& ref);
  std::string unprepare_one(const ClaimRef& ref);
  std::filesystem::path claim_file(const std::string& uid) const;
  std::filesystem::path cdi_file(const std::string& uid) const;

  PluginOptions options_;
  ClaimGetter get_claim_;
  mutable std::mutex mu_;  // claims_ and the node; Prepare and Unprepare one at a time
  std::map<std::string, PreparedClaim> claims_;
  std::shared_ptr<const topology::Node> node_;
  std::vector<Device> devices_;
  std::unique_ptr<Registration> registration_;
  std::unique_ptr<DraService> service_;
  std::unique_ptr<HealthService> health_service_;
  HealthFeed health_;  // its own lock: streams wait on it without holding mu_
  std::unique_ptr<grpc::Server> reg_server_, dra_server_;
};

}  // namespace railyard::dra
