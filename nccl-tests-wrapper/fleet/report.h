// railyard-validate fleet's report: JSON (`verdict` healthy|culprits|could not run, `pairs[] {a,
// b, rail, busbw}`, `culprits[] {kind, node, peer, rail, evidence}`, nodes by name, `reason`,
// `joined[] {rank, node}`, `missing[]` ranks), a heatmap per rail (SVG: node x node, coloured
// by each pair's bandwidth against the fleet's median pair), JUnit (a test case per culprit
// kind and node, an error when the fleet could not run), and node patches for the operator to
// apply.
#pragma once

#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/fleet/classify.h"

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
  // Why the fleet could not run (exit 2); empty when it ran. A pipeline collects the report and
  // JUnit either way, so they say why and who was missing rather than being absent.
  std::string could_not_run;
  std::vector<int> missing;  // ranks that never joined rank 0 (no name in `nodes`)
  // By node index: its rail NICs' firmware as checks/firmware.h writes it (empty: not known).
  std::vector<std::vector<std::string>> firmware;
};

// The fleet's firmware: the version most rail NICs run (more than half of those known), and the
// nodes with a rail NIC on another, each with those rails.
struct FirmwareOutlier {
  int node = -1;
  std::map<int, std::string> rails;  // rail -> its version
};
struct FleetFirmware {
  std::string majority;  // "" when no version holds more than half
  int known = 0;         // rail NICs whose version is known
  std::vector<FirmwareOutlier> differing;
};
FleetFirmware fleet_firmware(const FleetReport& r);

// The report of a fleet that could not run: `joined[r]` is rank r's node name, or nullopt when
// rank r never joined; empty when rank 0 stopped before it opened the rendezvous (bad settings).
FleetReport fleet_not_run(const std::string& why,
                          const std::vector<std::optional<std::string>>& joined, int rails);

// "why; joined: rank 0 (a), rank 1 (b); never joined: rank 2", for stderr and JUnit.
std::string fleet_not_run_text(const FleetReport& r);

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
