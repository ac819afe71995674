// One PCI function's place on the node without reading the whole node, for the CNI plugins that
// run once per attachment: the PFs alone (no VFs, no GID tables) decide the rails, then the one
// function is read. The answer is the full model's (discover() + Node::find_function); the
// tests hold it to that for every function of every fixture.
#pragma once

#include <optional>
#include <string>

#include "topology/model/rails.h"
#include "topology/sysfs/pci_address.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::topology {

struct ResolvedFunction {
  PciAddress address;
  std::string netdev;  // its first netdev in this network namespace; empty when none
  // False for a function that is neither an RDMA PF nor a VF of one (a plain NIC, an NVMe...):
  // the fields below are then unset.
  bool rdma_nic = false;
  std::string rdma;    // its own RDMA device
  int vf_number = -1;  // N of the PF's virtfnN link; -1 for a PF
  int rail = -1;
  std::string pf_rdma, pf_netdev;
};

// nullopt when there is no such PCI function. Throws RailsError when the rails file does not fit.
std::optional<ResolvedFunction> resolve_function(const Sysfs& sysfs, const RailsConfig& rails,
                                                 const PciAddress& address);
// The function under class/net/<netdev>; nullopt when the netdev has no PCI function here.
std::optional<ResolvedFunction> resolve_netdev(const Sysfs& sysfs, const RailsConfig& rails,
                                               const std::string& netdev);

}  // namespace railyard::topology
