// Resource pools: which devices each advertised resource holds, decided from the node model
// (topology/) and the configuration. A device is a PCI function of a NIC (the ID the kubelet
// hands to Multus and Multus to railyard-cni); a bundle device also carries its GPU.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "deviceplugin/config.h"
#include "topology/model/node.h"

namespace railyard::deviceplugin {

struct PoolDevice {
  std::string id;            // the NIC function's PCI address
  topology::FunctionRef fn;  // where the function sits in the node model
  int rail = -1;
  int numa = -1;       // -1: unknown (no TopologyInfo is advertised)
  int gpu = -1;        // bundles: index into Node::gpus
  int gpu_minor = -1;  // bundles: /dev/nvidia<minor>
  topology::PathClass path = topology::PathClass::kX;  // bundles: GPU<->NIC path
};

struct Pool {
  std::string resource;  // "railyard.io/rail0"
  PoolKind kind = PoolKind::kVf;
  bool nccl_ib_hca = false;
  // The node has /dev/infiniband/rdma_cm (sys/class/misc/rdma_cm: rdma_ucm is loaded); a device
  // the runtime cannot find fails the container, so Allocate hands it out only then.
  bool rdma_cm = false;
  std::vector<PoolDevice> devices;  // by PCI address

  const PoolDevice* find(const std::string& id) const;
};

struct PoolSet {
  std::vector<Pool> pools;            // pools that hold at least one device
  std::vector<std::string> warnings;  // pools that matched nothing, bundles without the VF asked
};

// Throws ConfigError when one PCI function lands in two pools (the kubelet would hand it out
// twice). `root` is the sysfs root, for the GPU minor numbers the NVIDIA driver publishes in
// <root>/proc/driver/nvidia/gpus/<pci>/information (else the GPU index is taken) and for
// <root>/sys/class/misc/rdma_cm.
PoolSet build_pools(const Config& config, const topology::Node& node,
                    const std::filesystem::path& root);

// /dev/nvidia<minor>: the minor the NVIDIA driver publishes under <root>/proc/driver/nvidia,
// else the GPU's index.
int gpu_minor(const std::filesystem::path& root, const topology::Gpu& gpu);

}  // namespace railyard::deviceplugin
