// railyard-validate fleet's pairing: which nodes test each other in which round. The circle
// method: N-1 rounds of N/2 disjoint pairs (N even; with N odd one node sits out each round,
// N rounds), every pair exactly once, all pairs of a round at once on every rail.
#pragma once

#include <utility>
#include <vector>

namespace railyard::validate {

using Round = std::vector<std::pair<int, int>>;  // (a, b) with a < b; disjoint within a round

// Throws std::invalid_argument for fewer than 2 nodes.
std::vector<Round> round_robin(int nodes);

// Bisection's follow-up: two rounds in which each suspect meets a different good node, each good
// node meets at most one suspect and, in the other round, a good node (so one slow suspect
// cannot make its partners look slow with every peer), and the good nodes left pair up. Too few
// good nodes for that (fewer than 2n, 2n+1 for an odd count n of suspects, or fewer than 4):
// round_robin(nodes). `suspects` sorted; none: no rounds.
std::vector<Round> suspect_rounds(int nodes, const std::vector<int>& suspects);

// Rounds and the wall time they take when one round costs `round_seconds` (every pair of a round
// runs at once, every rail at once): the paper calculation in the README.
struct ScheduleCost {
  int rounds = 0;
  long long pair_tests = 0;  // pairs x rails
  double seconds = 0;
};
ScheduleCost schedule_cost(int nodes, int rails, double round_seconds);

}  // namespace railyard::validate
