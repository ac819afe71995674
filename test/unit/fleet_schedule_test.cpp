// The fleet's round-robin: every pair exactly once, disjoint within a round, N-1 rounds for an
// even fleet (the bound) and N for an odd one.
#include "nccl-tests-wrapper/fleet_schedule.h"

#include <catch2/catch.hpp>
#include <set>

using namespace railyard::validate;

TEST_CASE("round_robin: every pair once, disjoint rounds, the N-1 bound", "[validate][fleet]") {
  for (int n : {2, 3, 4, 5, 6, 7, 8, 16, 63, 64, 512}) {
    INFO("nodes " << n);
    const auto rounds = round_robin(n);
    CHECK(static_cast<int>(rounds.size()) == (n % 2 ? n : n - 1));
    std::set<std::pair<int, int>> seen;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        CHECK(a < b);
        CHECK(a >= 0);
        CHECK(b < n);
        CHECK(busy.insert(a).second);  // nobody twice in one round
        CHECK(busy.insert(b).second);
        CHECK(seen.insert({a, b}).second);  // no pair twice
      }
      CHECK(static_cast<int>(round.size()) == n / 2);  // everyone busy (but one, when odd)
    }
    CHECK(static_cast<long long>(seen.size()) == static_cast<long long>(n) * (n - 1) / 2);
  }
  CHECK_THROWS_AS(round_robin(1), std::invalid_argument);
}

TEST_CASE("schedule_cost: rounds, pair tests and wall time", "[validate][fleet]") {
  const auto c = schedule_cost(64, 8, 10.0);
  CHECK(c.rounds == 63);
  CHECK(c.pair_tests == 64 * 63 / 2 * 8);
  CHECK(c.seconds == 630.0);
  CHECK(schedule_cost(7, 2, 1.0).rounds == 7);
}
