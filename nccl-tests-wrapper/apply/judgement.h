// What a validation says about one node, in the shape the cluster can act on: which rails failed
// and why (each becomes a DeviceTaintRule on that rail's devices), what failed that no single rail
// explains (the node keeps or gets its taint), or that nothing could be judged.
#pragma once

#include <string>
#include <vector>

#include "common/rail_findings.h"
#include "nccl-tests-wrapper/fleet/report.h"
#include "nccl-tests-wrapper/run/validate.h"

namespace railyard::validate {

struct RailCall {
  int rail = -1;
  // The taint's value, a label value naming the finding: "slow", "port-errors", "link-flaps",
  // "port-down", "miswire", "nic", "cable"... the first finding's when a rail has several.
  std::string value;
  std::vector<std::string> evidence;  // one line per finding, as the report says it
};

struct NodeJudgement {
  std::string node;  // the Node's name
  Verdict verdict = Verdict::kPass;
  std::vector<RailCall> rails;             // failed rails, by rail index
  std::vector<std::string> node_failures;  // failures of the node as a whole
  std::string could_not_run;               // why, for kCouldNotRun
};

// One node's run (railyard-validate run). Failed checks and runs of one rail become that rail's
// call; the rest (the run across all rails, node checks) are the node's.
NodeJudgement judge_node(const Report& report, const std::string& node);

// Every node of a fleet run: a node no culprit names passed. A NIC, miswire or cable names a rail
// of its node (a cable both ends'); a node or leaf culprit, the node itself. Empty when the fleet
// could not run: nothing is judged then.
std::vector<NodeJudgement> judge_fleet(const FleetReport& report);

// The judgement as the node-local file the device plugin reads (common/rail_findings.h): each
// failed rail with its finding and first evidence line; no rail on a pass.
RailFindings rail_findings(const NodeJudgement& j, const std::string& now);

}  // namespace railyard::validate
