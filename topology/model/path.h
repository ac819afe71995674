// Path classes between two PCI functions, as `nvidia-smi topo -m` names them.
//
//   PIX   through at most one PCIe bridge: one switch, or one root port (functions of one card)
//   PXB   through several PCIe bridges, without the host bridge
//   PHB   through a PCIe host bridge (the CPU), one root complex
//   NODE  between host bridges of one NUMA node
//   SYS   across NUMA nodes (the SMP interconnect)
//
// A switch counts as one bridge, identified as NCCL's topology does by its upstream port: in a
// sysfs path /pciD:B/<root port>/<upstream>/<downstream>/<device> the bridges alternate, so the
// hops are the root port and the 2nd, 4th, ... bridge below the host bridge.
//
// NCCL's view: NCCL skips root ports, so the functions of one card sitting directly on a root
// port are PIX here (as nvidia-smi) and PHB in NCCL; NCCL has no NODE class; two host bridges in
// one NUMA node count as PHB for NCCL_NET_GDR_LEVEL and NCCL_P2P_LEVEL (nccl_view()). A NUMA node
// of -1 (unknown, as on many cloud VMs) is taken as the same node as any other: NODE, never SYS.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "topology/sysfs/pci.h"

namespace railyard::topology {

enum class PathClass { kX, kPIX, kPXB, kPHB, kNODE, kSYS };

std::string_view to_string(PathClass c);
std::optional<PathClass> parse_path_class(std::string_view s);
PathClass path_class(const PciDevice& a, const PciDevice& b);
PathClass nccl_view(PathClass c);

// The upstream ports of the PCIe switches above a function, the one below the root port first.
// Functions whose last entries match are PIX to each other; whose first match, PXB at most.
std::vector<PciAddress> switch_upstream_ports(const PciDevice& d);

}  // namespace railyard::topology
