#include "topology/bundles/bundles.h"

#include <cstdlib>

#include "topology/bundles/assignment.h"

namespace railyard::topology {

std::vector<Bundle> compute_bundles(const std::vector<Gpu>& gpus, const std::vector<Nic>& nics,
                                    const std::vector<int>& rails) {
  if (gpus.empty() || rails.empty()) return {};
  const int64_t g = static_cast<int64_t>(gpus.size());
  const int64_t r = static_cast<int64_t>(rails.size());
  const int64_t copies = (g + r - 1) / r;  // how many GPUs may have to share one rail
  const int64_t base = g + 1;              // base^k: one class-k path outweighs g better ones

  const int64_t order_scale = 1;
  const int64_t share_scale = order_scale * (g * r + 1);
  const int64_t path_scale = share_scale * (g * copies + 1);

  std::vector<std::vector<int64_t>> cost(gpus.size());
  std::vector<std::pair<int, int>> column;  // (rail, copy)
  for (int64_t c = 0; c < copies; ++c)
    for (int64_t k = 0; k < r; ++k) column.emplace_back(static_cast<int>(k), static_cast<int>(c));

  std::vector<std::vector<PathClass>> path(gpus.size(), std::vector<PathClass>(rails.size()));
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t k = 0; k < rails.size(); ++k)
      path[i][k] = path_class(gpus[i].pci, nics[static_cast<size_t>(rails[k])].pf.pci);
    for (const auto& [k, c] : column) {
      int64_t weight = 1;
      for (int s = 0; s < static_cast<int>(path[i][static_cast<size_t>(k)]); ++s) weight *= base;
      cost[i].push_back(weight * path_scale + c * share_scale +
                        std::llabs(static_cast<int64_t>(k) - static_cast<int64_t>(i)) *
                            order_scale);
    }
  }
  const std::vector<int> choice = min_cost_assignment(cost);
  std::vector<Bundle> out;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int k = column[static_cast<size_t>(choice[i])].first;
    out.push_back(Bundle{static_cast<int>(i), rails[static_cast<size_t>(k)], k,
                         path[i][static_cast<size_t>(k)]});
  }
  return out;
}

}  // namespace railyard::topology
