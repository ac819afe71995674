// The rail of a PCI function (Multus' deviceID), from topology/ as every component decides it.
#pragma once

#include <optional>
#include <string>

namespace railyard::sbr {

// nullopt when the function is on no rail; throws CniError(kInvalidConfig) for an address that
// is not one, or a rails file that does not fit the node.
std::optional<int> rail_of_device(const std::string& pci_address);

}  // namespace railyard::sbr
