// Device selectors with sriov-network-device-plugin's field names, so that operators can reuse
// what they wrote for it: vendors, devices, drivers, pfNames, rootDevices, linkTypes, isRdma;
// plus rdmaDevices, pciAddresses and rails. Every list is an OR; the fields are ANDed.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/model/node.h"

namespace railyard::topology {

class SelectorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Selectors {
  std::vector<std::string> vendors;        // "15b3"
  std::vector<std::string> devices;        // "1021"
  std::vector<std::string> drivers;        // "mlx5_core"
  std::vector<std::string> pf_names;       // PF netdev names
  std::vector<std::string> root_devices;   // PF PCI addresses
  std::vector<std::string> link_types;     // "infiniband"/"ib", "ethernet"/"ether"
  std::vector<std::string> rdma_devices;   // "mlx5_0"
  std::vector<std::string> pci_addresses;  // the function's own address
  std::vector<int> rails;                  // rail indices (pools per rail)
  bool is_rdma = true;                     // railyard only serves RDMA functions

  bool empty() const;
  // Does this function of `nic` (the PF, or one of its VFs) match?
  bool matches(const Nic& nic, const NicFunction& fn) const;

  // Throws SelectorError naming an unknown field or a value of the wrong type.
  static Selectors from_json(const nlohmann::json& j);
};

}  // namespace railyard::topology
