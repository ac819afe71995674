// The fleet's round-robin: every pair exactly once, disjoint within a round, N-1 rounds for an
// even fleet (the bound) and N for an odd one.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "nccl-tests-wrapper/fleet/schedule.h"

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

TEST_CASE("suspect_rounds: two good partners per suspect, no good node with two suspects",
          "[validate][fleet]") {
  for (const auto& [n, suspects] : std::vector<std::pair<int, std::vector<int>>>{
           {8, {2, 3}}, {8, {5}}, {10, {0, 4, 8}}, {64, {7, 8, 40}}, {512, {1, 300}}}) {
    INFO("nodes " << n << ", " << suspects.size() << " suspects");
    const auto rounds = suspect_rounds(n, suspects);
    REQUIRE(rounds.size() == 2);
    const std::set<int> bad(suspects.begin(), suspects.end());
    std::map<int, std::set<int>> partners;  // suspect -> good nodes met
    std::map<int, int> suspects_met, goods_met;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        CHECK(a < b);
        CHECK(busy.insert(a).second);
        CHECK(busy.insert(b).second);
        CHECK_FALSE((bad.count(a) && bad.count(b)));  // a suspect always meets a good node
        for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
          if (bad.count(x)) {
            partners[x].insert(y);
            ++suspects_met[y];
          } else if (!bad.count(y)) {
            ++goods_met[x];
          }
      }
    }
    for (int s : suspects) CHECK(partners[s].size() == 2);
    for (const auto& [g, met] : suspects_met) {
      CHECK(met == 1);
      CHECK(goods_met[g] >= 1);  // and a good node in the other round
    }
  }
  CHECK(suspect_rounds(8, {}).empty());
  // Too many suspects for good partners: everyone against everyone.
  CHECK(suspect_rounds(8, {0, 1, 2, 3}).size() == 7);
  CHECK(suspect_rounds(9, {0, 4, 8}).size() == 9);  // 6 good: one would meet only a suspect
  CHECK(suspect_rounds(3, {1}).size() == 3);
}
