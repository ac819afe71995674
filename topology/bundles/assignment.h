// Minimum-cost assignment of rows to distinct columns (Hungarian method, O(n^2 m)).
#pragma once

#include <cstdint>
#include <vector>

namespace railyard::topology {

// cost[r][c] for rows <= columns; returns the column chosen for each row.
std::vector<int> min_cost_assignment(const std::vector<std::vector<int64_t>>& cost);

}  // namespace railyard::topology
