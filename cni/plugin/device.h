// Which host netdev the attachment is about, and its rail, from topology/ (the same answer the
// device plugin gives). sysfs is read under RAILYARD_SYSFS_ROOT, the rails file from
// RAILYARD_RAILS_FILE (default /etc/railyard/rails.json).
#pragma once

#include <string>

#include "cni/plugin/config.h"

namespace railyard::cni {

struct Device {
  std::string pci;     // empty when given by netdev name and not found in sysfs
  std::string netdev;  // its name in the host network namespace now
  int rail = -1;
  std::string rail_key;  // for the `rails` map: rail index
  std::string pf_rdma, pf_netdev;
  std::string rdma;    // the function's own RDMA device, moved with it in exclusive mode
  int vf_number = -1;  // -1: not a VF (a PF, or any netdev)
  std::string lock_key() const { return pci.empty() ? "netdev-" + netdev : pci; }
};

// Throws CniError(kInvalidConfig) when the device is not there or has no netdev.
Device resolve_device(const NetConf& conf);

// ADD hands only the node's rail functions (rail PFs and their VFs) to a pod, or a netdev the
// node policy lists: a NAD must not reach the management NIC. Throws CniError(kInvalidConfig).
void require_allowed(const Device& dev, const NodePolicy& policy);

// The IPAM config for this device: rails[rail index], rails[PF RDMA name], rails[PF netdev],
// else the network's ipam.
nlohmann::json ipam_for(const NetConf& conf, const Device& dev);

}  // namespace railyard::cni
