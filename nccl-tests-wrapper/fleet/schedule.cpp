#include "nccl-tests-wrapper/fleet/schedule.h"

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

std::vector<Round> suspect_rounds(int nodes, const std::vector<int>& suspects) {
  if (suspects.empty()) return {};
  std::vector<int> good;
  for (int r = 0; r < nodes; ++r)
    if (!std::binary_search(suspects.begin(), suspects.end(), r)) good.push_back(r);
  const size_t n = suspects.size();
  // With n odd, the good nodes left over in a round are odd in number too when there are just
  // 2n: the one sitting out would have met only a suspect.
  if (good.size() < 2 * n + n % 2 || good.size() < 4) return round_robin(nodes);
  std::vector<Round> rounds(2);
  for (size_t j = 0; j < 2; ++j) {
    // Round j: the suspects with good[j*n .. j*n+n), the other good nodes in twos, those that
    // met a suspect in the other round first (the one left out, if any, met none).
    std::vector<int> rest;
    for (size_t g = 0; g < good.size(); ++g) {
      if (g >= j * n && g < j * n + n)
        rounds[j].push_back(std::minmax(suspects[g - j * n], good[g]));
      else
        rest.push_back(good[g]);
    }
    for (size_t i = 0; i + 1 < rest.size(); i += 2)
      rounds[j].push_back(std::minmax(rest[i], rest[i + 1]));
  }
  return rounds;
}

}  // namespace railyard::validate
