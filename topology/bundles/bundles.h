// GPU<->NIC bundles: each GPU gets the rail NIC that keeps the worst GPU-NIC path of the node
// as short as possible, then the fewest long paths, each rail used once while rails last.
//
// Costs are lexicographic: (1) path class, weighted so one worse path outweighs any number of
// better ones, which minimises the worst path first; (2) how often a rail is already shared,
// when there are more GPUs than rails; (3) |rail - GPU index|, so that equal choices come out
// in the natural order. An exact assignment (assignment.h) then picks the cheapest.
#pragma once

#include <vector>

#include "topology/model/node.h"

namespace railyard::topology {

std::vector<Bundle> compute_bundles(const std::vector<Gpu>& gpus, const std::vector<Nic>& nics,
                                    const std::vector<int>& rails);

}  // namespace railyard::topology
