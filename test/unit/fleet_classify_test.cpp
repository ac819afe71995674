// The fleet verdict on synthetic matrices: a healthy fleet with noise names nothing; each
// injected fault is named exactly, and nothing else.
#include <catch2/catch.hpp>
#include <functional>
#include <random>

#include "nccl-tests-wrapper/fleet/classify.h"

using namespace railyard::validate;

namespace {

constexpr int kNodes = 8, kRails = 4;

// Every pair on every rail at ~10 GB/s with +-15% noise; `fault` may rewrite a result.
std::vector<PairResult> fleet(unsigned seed, const std::function<void(PairResult&)>& fault = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(8.5, 11.5);
  std::vector<PairResult> out;
  for (int k = 0; k < kRails; ++k)
    for (int a = 0; a < kNodes; ++a)
      for (int b = a + 1; b < kNodes; ++b) {
        PairResult r{a, b, k, noise(rng)};
        if (fault) fault(r);
        out.push_back(r);
      }
  return out;
}

std::string kinds(const std::vector<Culprit>& c) {
  std::string s;
  for (const auto& x : c)
    s += (s.empty() ? "" : " ") + x.kind + "(" + std::to_string(x.node) + "," +
         std::to_string(x.peer) + "," + std::to_string(x.rail) + ")";
  return s;
}

}  // namespace

TEST_CASE("fleet verdict: a healthy, noisy fleet raises nothing", "[validate][fleet]") {
  for (unsigned seed = 1; seed <= 10; ++seed)
    CHECK(kinds(classify_fleet(kNodes, kRails, fleet(seed), {})).empty());
}

TEST_CASE("fleet verdict: one slow NIC is that node's rail", "[validate][fleet]") {
  const auto c = classify_fleet(kNodes, kRails,
                                fleet(3,
                                      [](PairResult& r) {
                                        if (r.rail == 2 && (r.a == 5 || r.b == 5)) *r.busbw /= 4;
                                      }),
                                {});
  CHECK(kinds(c) == "nic(5,-1,2)");
  CHECK_THAT(c.at(0).evidence, Catch::StartsWith("node 5 on rail 2: 2."));
}

TEST_CASE("fleet verdict: one bad cable is that pair on that rail", "[validate][fleet]") {
  const auto c = classify_fleet(kNodes, kRails,
                                fleet(4,
                                      [](PairResult& r) {
                                        if (r.rail == 1 && r.a == 2 && r.b == 6) r.busbw.reset();
                                      }),
                                {});
  CHECK(kinds(c) == "cable(2,6,1)");
  CHECK_THAT(c.at(0).evidence, Catch::StartsWith("pair 2-6 on rail 1: unreachable"));
}

TEST_CASE("fleet verdict: every pair slow on one rail is its leaf", "[validate][fleet]") {
  const auto c = classify_fleet(kNodes, kRails,
                                fleet(5,
                                      [](PairResult& r) {
                                        if (r.rail == 3) *r.busbw /= 3;
                                      }),
                                {});
  CHECK(kinds(c) == "leaf(-1,-1,3)");
}

TEST_CASE("fleet verdict: a NIC on the wrong leaf is a miswire naming both rails",
          "[validate][fleet]") {
  // Node 4's rail-1 NIC is cabled to rail 0's leaf: it reaches no rail-1 peer.
  const auto faulty = fleet(6, [](PairResult& r) {
    if (r.rail == 1 && (r.a == 4 || r.b == 4)) r.busbw.reset();
  });
  const auto c = classify_fleet(kNodes, kRails, faulty, {{4, 1, 0}});
  CHECK(kinds(c) == "miswire(4,-1,1)");
  CHECK(c.at(0).other_rail == 0);
  CHECK_THAT(c.at(0).evidence, Catch::StartsWith("node 4's rail 1 NIC is on rail 0's leaf"));
  // Without the neighbour evidence it is the NIC (or its cable to the leaf).
  CHECK(kinds(classify_fleet(kNodes, kRails, faulty, {})) == "nic(4,-1,1)");
}

TEST_CASE("fleet verdict: a 2-rail node with both cables swapped is miswired, not broken",
          "[validate][fleet]") {
  // With 2 rails, a swap silences every rail of the node: the sightings decide.
  std::vector<PairResult> faulty;
  for (int k = 0; k < 2; ++k)
    for (int a = 0; a < kNodes; ++a)
      for (int b = a + 1; b < kNodes; ++b)
        faulty.push_back({a, b, k, a == 3 || b == 3 ? std::nullopt : std::optional(10.0)});
  CHECK(kinds(classify_fleet(kNodes, 2, faulty, {})) == "node(3,-1,-1)");
  const auto c = classify_fleet(kNodes, 2, faulty, {{3, 0, 1}, {3, 1, 0}});
  CHECK(kinds(c) == "miswire(3,-1,0) miswire(3,-1,1)");
  CHECK(c.at(0).other_rail == 1);
  CHECK(c.at(1).other_rail == 0);
}

TEST_CASE("fleet verdict: a node slow everywhere is the node, not four NICs", "[validate][fleet]") {
  const auto c = classify_fleet(kNodes, kRails,
                                fleet(7,
                                      [](PairResult& r) {
                                        if (r.a == 0 || r.b == 0) *r.busbw /= 5;
                                      }),
                                {});
  CHECK(kinds(c) == "node(0,-1,-1)");
}

TEST_CASE("fleet verdict: two faults at once are both named", "[validate][fleet]") {
  const auto c = classify_fleet(kNodes, kRails,
                                fleet(8,
                                      [](PairResult& r) {
                                        if (r.rail == 0 && (r.a == 3 || r.b == 3)) *r.busbw /= 4;
                                        if (r.rail == 2 && r.a == 1 && r.b == 7) *r.busbw /= 4;
                                      }),
                                {});
  CHECK(kinds(c) == "nic(3,-1,0) cable(1,7,2)");
}

TEST_CASE("bisection: a ring slow on one rail, or silent, is slow, and noise is not",
          "[validate][fleet]") {
  using Rails = std::vector<std::optional<double>>;
  // Four healthy rings within +-15%: none is slow.
  CHECK(slow_rings({Rails{10, 11, 9}, Rails{9.5, 10, 10.5}, Rails{11, 9, 10}, Rails{10, 10, 10}},
                   0.7) == std::vector<bool>{false, false, false, false});
  // One ring slow on rail 1, one silent: those two, and only those.
  CHECK(slow_rings({Rails{10, 3, 10}, Rails{10, 10, 10},
                    Rails{std::nullopt, std::nullopt, std::nullopt}, Rails{10, 9, 11}},
                   0.7) == std::vector<bool>{true, false, true, false});
  // Both halves bad: one silent, the other slow on two rails of three. The median would call
  // the slow one typical; its own best rail says otherwise.
  CHECK(slow_rings({Rails{1.8, 1.7, 4.5}, Rails{std::nullopt, std::nullopt, std::nullopt}}, 0.7) ==
        std::vector<bool>{true, true});
  // A ring slow on every rail among healthy ones: the typical rail says so.
  CHECK(slow_rings({Rails{3, 3, 3}, Rails{10, 10, 10}, Rails{10, 10, 10}}, 0.7) ==
        std::vector<bool>{true, false, false});
}
