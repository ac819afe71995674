// railyard-validate fleet's report: JSON (`pairs[] {a, b, rail, busbw}`, `culprits[] {kind,
// node, peer, rail, evidence}`, nodes by name), a heatmap per rail (SVG: node x node, coloured
// by each pair's bandwidth against the fleet's median pair), JUnit (a test case per culprit
// kind and node), and node patches for the operator to apply.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/fleet_classify.h"

namespace railyard::validate {

// One ring allreduce of the bisection: its members and each rail's bus bandwidth (nullopt:
// the ring did not run).
struct RingRun {
  std::string title;
  std::vector<int> members;
  std::vector<std::optional<double>> busbw;
};

struct FleetReport {
  std::vector<std::string> nodes;  // index -> Kubernetes node name
  int rails = 0;
  std::vector<PairResult> results;              // as measured (the better run of a repeat)
  std::vector<std::optional<double>> relative;  // parallel to results, when known: the share
                                                // of its round's median pair, as judged
  std::vector<Culprit> culprits;
  std::vector<RingRun> rings;         // --mode bisect: the rings run, in order
  std::vector<std::string> problems;  // ranks lost, rails that gave no number and why
};

nlohmann::json fleet_json(const FleetReport& r);
std::string fleet_heatmap_svg(const FleetReport& r, int rail);
std::string fleet_junit(const FleetReport& r);

// Per node named by a culprit: a patch for `kubectl patch node N --patch-file F` (label
// railyard.io/validated=false, annotation railyard.io/fleet-validation with the evidence) and,
// for a failing NIC, miswire or node, the `kubectl taint` command for a NoSchedule taint (a
// patch of spec.taints would replace the node's other taints). A leaf is the fabric's: no node
// is patched for it. {"node": name, "patch": {...}, "taint": "kubectl taint ..." or null}.
// The slowest of `results` (a silent pair before any number), or null when there are none;
// "0.0239 GB/s" for a measured bandwidth.
const PairResult* slowest_pair(const std::vector<PairResult>& results);
std::string gbps_text(double busbw);

// What a person reads first: per rail the median and the slowest pair, the matrix per rail for
// fleets of up to 16 nodes, each culprit with its evidence, and the problems met on the way.
void print_fleet_summary(const FleetReport& r, std::ostream& out);

nlohmann::json fleet_node_patches(const FleetReport& r);

}  // namespace railyard::validate
