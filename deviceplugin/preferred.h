// GetPreferredAllocation's choice: from the devices the kubelet offers, `size` devices that
// include `must_include`, preferring (in this order) one device per rail, the fewest NUMA nodes,
// the shortest worst PCIe path between the chosen devices, then the shortest paths overall. The
// path is measured between GPUs for bundles (their NICs follow them) and between NIC functions
// otherwise.
#pragma once

#include <string>
#include <vector>

#include "deviceplugin/allocate.h"
#include "deviceplugin/pools.h"
#include "topology/model/node.h"

namespace railyard::deviceplugin {

// Throws AllocateError for an unknown ID, a must_include device that is not available, or a
// size that the available devices cannot meet. The result is sorted by ID.
std::vector<std::string> preferred_allocation(const Pool& pool, const topology::Node& node,
                                              const std::vector<std::string>& available,
                                              const std::vector<std::string>& must_include,
                                              int size);

}  // namespace railyard::deviceplugin
