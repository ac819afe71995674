// railyard-validate fleet's report: JSON (`pairs[] {a, b, rail, busbw}`, `culprits[] {kind,
// node, peer, rail, evidence}`, nodes by name), a heatmap per rail (SVG: node x node, coloured
// by each pair's bandwidth against the fleet's median pair), JUnit (a test case per culprit
// kind and node), and node patches for the operator to apply.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/fleet_classify.h"

namespace railyard::validate {

struct FleetReport {
  std::vector<std::string> nodes;  // index -> Kubernetes node name
  int rails = 0;
  std::vector<PairResult> results;
  std::vector<Culprit> culprits;
};

nlohmann::json fleet_json(const FleetReport& r);
std::string fleet_heatmap_svg(const FleetReport& r, int rail);
std::string fleet_junit(const FleetReport& r);

// Per node named by a culprit: a patch for `kubectl patch node N --patch-file F` (label
// railyard.io/validated=false, annotation railyard.io/fleet-validation with the evidence) and,
// for a failing NIC, miswire or node, the `kubectl taint` command for a NoSchedule taint (a
// patch of spec.taints would replace the node's other taints). A leaf is the fabric's: no node
// is patched for it. {"node": name, "patch": {...}, "taint": "kubectl taint ..." or null}.
nlohmann::json fleet_node_patches(const FleetReport& r);

}  // namespace railyard::validate
