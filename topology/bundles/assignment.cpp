#include "topology/bundles/assignment.h"

#include <limits>
#include <stdexcept>

namespace railyard::topology {

std::vector<int> min_cost_assignment(const std::vector<std::vector<int64_t>>& cost) {
  const size_t n = cost.size();
  if (n == 0) return {};
  const size_t m = cost[0].size();
  if (m < n) throw std::invalid_argument("min_cost_assignment: more rows than columns");
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
  // Potentials u (rows) and v (columns), 1-based with a virtual column 0.
  std::vector<int64_t> u(n + 1, 0), v(m + 1, 0);
  std::vector<size_t> match(m + 1, 0), way(m + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    match[0] = i;
    size_t j0 = 0;
    std::vector<int64_t> minv(m + 1, kInf);
    std::vector<bool> used(m + 1, false);
    do {
      used[j0] = true;
      const size_t i0 = match[j0];
      int64_t delta = kInf;
      size_t j1 = 0;
      for (size_t j = 1; j <= m; ++j) {
        if (used[j]) continue;
        const int64_t cur = cost[i0 - 1][j - 1] - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (size_t j = 0; j <= m; ++j) {
        if (used[j]) {
          u[match[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (match[j0] != 0);
    do {
      const size_t j1 = way[j0];
      match[j0] = match[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<int> row_to_col(n, -1);
  for (size_t j = 1; j <= m; ++j)
    if (match[j] != 0) row_to_col[match[j] - 1] = static_cast<int>(j - 1);
  return row_to_col;
}

}  // namespace railyard::topology
