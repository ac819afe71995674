// railyard-validate fleet's verdict: from every rail of every pair's bandwidth, which part is
// bad. A pure function, so every case is tested without a fleet:
//   one node slow on rail k with every peer          -> that node's NIC on rail k ("nic")
//   one node slow on every rail with every peer       -> the node itself ("node")
//   one pair slow on one rail, both fine elsewhere    -> that cable or path ("cable")
//   every pair slow on rail k                         -> leaf k or its config ("leaf")
//   a node's rail-k NIC seen on rail j's leaf         -> miswired, naming both rails ("miswire")
// "Slow" is below `slow_fraction` of the fleet's median pair, over all rails: in a
// rail-optimised fabric every rail is built alike, so a rail that is slow everywhere stands out.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace railyard::validate {

struct PairResult {
  int a = 0, b = 0, rail = 0;
  std::optional<double> busbw;  // GB/s; nullopt when the pair could not talk on that rail
};

// Neighbour evidence (LLDP, or which peers' rail addresses a NIC reaches): node's rail-`rail`
// NIC sits on the leaf of rail `seen_on_rail`.
struct Sighting {
  int node = 0, rail = 0, seen_on_rail = 0;
};

struct Culprit {
  std::string kind;  // nic, node, cable, leaf, miswire
  int node = -1, peer = -1, rail = -1;
  int other_rail = -1;  // miswire: the rail whose leaf the NIC is on
  std::string evidence;
};

struct ClassifyOptions {
  double slow_fraction = 0.7;
  std::vector<std::string> names;  // node index -> name, for the evidence ("node 3" without)
};

// The median of every pair's bandwidth over all rails: the fleet's typical pair, the basis of
// "slow" here and of the heatmap's colours.
double fleet_median_busbw(const std::vector<PairResult>& results);

// Compare within a round: the pairs of one round share the machine's load, rounds need not.
// Each result of one run of a round as a fraction of that run's median pair (nullopt stays).
std::vector<std::optional<double>> relative_to_run(const std::vector<PairResult>& run);

// Bisection's judgement of the rings of one halving (each ring's bus bandwidth per rail, nullopt:
// silent). Every rail is built alike and bus bandwidth hardly depends on a ring's size, so each
// ring should reach, on every rail, both the halving's typical rail (the median over every ring
// and rail: one bad ring cannot drag it down) and its own best rail (a ring can be slow when
// the others are slow or silent too). True for each ring that does not.
std::vector<bool> slow_rings(const std::vector<std::vector<std::optional<double>>>& busbw,
                             double slow_fraction);

std::vector<Culprit> classify_fleet(int nodes, int rails, const std::vector<PairResult>& results,
                                    const std::vector<Sighting>& sightings,
                                    const ClassifyOptions& options = {});

}  // namespace railyard::validate
