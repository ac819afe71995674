// The model of a GPU node that every railyard component shares: GPUs, RDMA NICs with their
// VFs, rails and GPU<->NIC bundles. Build it with discover() (discover/discover.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/model/path.h"
#include "topology/sysfs/diagnostics.h"
#include "topology/sysfs/pci.h"
#include "topology/sysfs/rdma.h"

namespace railyard::topology {

struct NetDevice {
  std::string name;
  std::string mac;
  int mtu = 0;
  std::string operstate;  // "up", "down", "unknown"
};

// A PF or a VF: the PCI function with what the kernel hangs below it.
struct NicFunction {
  PciDevice pci;
  std::vector<NetDevice> netdevs;
  std::optional<RdmaDevice> rdma;
  int vf_number = -1;  // N of the PF's virtfnN link; -1 for a PF

  std::string netdev_name() const { return netdevs.empty() ? "" : netdevs.front().name; }
  std::string rdma_name() const { return rdma ? rdma->name : ""; }
};

struct Nic {
  NicFunction pf;
  int total_vfs = 0;             // sriov_totalvfs
  int num_vfs = 0;               // sriov_numvfs
  std::vector<NicFunction> vfs;  // in virtfnN order
  int rail = -1;                 // -1: not a rail (left out by the selectors or the rails file)

  // The first port: what rail checks look at (compute NICs have one port per function).
  const RdmaPort* port() const;
  std::string link_layer() const;
};

struct Gpu {
  int index = 0;  // CUDA_DEVICE_ORDER=PCI_BUS_ID
  PciDevice pci;
};

struct Bundle {
  int gpu = 0;  // index into Node::gpus
  int nic = 0;  // index into Node::nics
  int rail = 0;
  PathClass path = PathClass::kSYS;
};

// Where a PCI function sits in the model.
struct FunctionRef {
  int nic = -1;  // index into Node::nics
  int vf = -1;   // index into Nic::vfs, -1 for the PF
};

struct Node {
  std::vector<Gpu> gpus;   // by PCI address
  std::vector<Nic> nics;   // RDMA PFs, by PCI address
  std::vector<int> rails;  // rails[k] = index into nics of rail k
  std::vector<Bundle> bundles;
  Diagnostics diagnostics;

  std::optional<FunctionRef> find_function(const PciAddress& addr) const;
  const NicFunction& function(const FunctionRef& ref) const;
  // Rail of a PF or VF; -1 when it is not on a rail or unknown.
  int rail_of(const PciAddress& addr) const;
};

}  // namespace railyard::topology
