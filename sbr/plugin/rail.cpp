#include "sbr/plugin/rail.h"

#include "cni-protocol/error.h"
#include "topology/discover/resolve.h"

namespace railyard::sbr {

std::optional<int> rail_of_device(const std::string& pci_address) {
  namespace topo = railyard::topology;
  auto addr = topo::PciAddress::parse(pci_address);
  if (!addr)
    throw cni::CniError(cni::kInvalidConfig, "deviceID '" + pci_address + "' is not a PCI address");
  try {
    const topo::Sysfs sysfs(topo::sysfs_root_from(""));
    // The PFs decide the rail; the node's VFs are never read (topology/discover/resolve.h).
    const auto fn = topo::resolve_function(sysfs, topo::load_node_rails(), *addr);
    if (!fn || fn->rail < 0) return std::nullopt;
    return fn->rail;
  } catch (const topo::RailsError& e) {
    throw cni::CniError(cni::kInvalidConfig, e.what());
  }
}

}  // namespace railyard::sbr
