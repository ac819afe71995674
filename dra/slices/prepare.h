// NodePrepareResources without gRPC: what a claim allocated on this node's pool means here. The
// claim's devices found in the node model, what a container gets for them (the device plugin's
// Allocate: uverbs and rdma_cm nodes, NCCL_IB_HCA, PCIDEVICE_*; GPU nodes or env), written as a
// CDI spec, and the record the driver keeps on disk until Unprepare.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "deviceplugin/config.h"
#include "dra/slices/slices.h"
#include "topology/model/node.h"

namespace railyard::dra {

inline constexpr const char* kCdiKind = "railyard.io/claim";

// A claim this node cannot prepare: the message goes back to the kubelet, which shows it on the
// pod (FailedPrepareDynamicResources) and asks again.
class PrepareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PreparedDevice {
  std::string request;  // the claim's request it was allocated for
  std::string name;     // in the pool
  std::string type;     // gpu, nic, vf
  std::string pci;
  int rail = -1;
  std::string rdma;                  // RDMA device, NICs
  std::vector<std::string> cdi_ids;  // "railyard.io/claim=<claim UID>-<name>", a GPU's own CDI
};

struct PreparedClaim {
  std::string uid, ns, name;
  std::vector<std::string> pods;  // UIDs of the pods it is reserved for
  std::vector<PreparedDevice> devices;
  nlohmann::json cdi_spec;  // what was written for the runtime

  std::string ref() const { return ns + "/" + name; }
  nlohmann::json to_json() const;
  static PreparedClaim from_json(const nlohmann::json& j);  // throws nlohmann::json::exception
};

struct PrepareOptions {
  std::string pool;            // this node's pool: the node name
  std::filesystem::path root;  // sysfs root: GPU minors, rdma_cm
  deviceplugin::GpuDevices gpu_devices = deviceplugin::GpuDevices::kEnv;
  std::string gpu_cdi_kind = "nvidia.com/gpu";
};

// `claim` is the ResourceClaim as the API server has it; `uid` the one the kubelet asked for.
// Throws PrepareError when the claim is not the one asked for, is not allocated, or names a
// device this pool does not have.
PreparedClaim prepare_claim(const nlohmann::json& claim, const std::string& uid,
                            const topology::Node& node, const std::vector<Device>& devices,
                            const PrepareOptions& options);

}  // namespace railyard::dra
