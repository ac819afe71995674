#include "nccl-tests-wrapper/fleet_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace railyard::validate {

std::vector<Round> round_robin(int nodes) {
  if (nodes < 2) throw std::invalid_argument("a fleet schedule needs at least 2 nodes");
  // Odd: a phantom node N; whoever meets it sits the round out.
  const int n = nodes % 2 ? nodes + 1 : nodes;
  std::vector<int> ring(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ring[static_cast<size_t>(i)] = i;
  std::vector<Round> rounds;
  for (int r = 0; r < n - 1; ++r) {
    Round round;
    for (int i = 0; i < n / 2; ++i) {
      int a = ring[static_cast<size_t>(i)], b = ring[static_cast<size_t>(n - 1 - i)];
      if (a >= nodes || b >= nodes) continue;
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
    // Node 0 stays; everyone else moves one seat round the circle.
    std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());
  }
  return rounds;
}

ScheduleCost schedule_cost(int nodes, int rails, double round_seconds) {
  ScheduleCost c;
  c.rounds = nodes % 2 ? nodes : nodes - 1;
  c.pair_tests = static_cast<long long>(nodes) * (nodes - 1) / 2 * rails;
  c.seconds = c.rounds * round_seconds;
  return c;
}

}  // namespace railyard::validate
