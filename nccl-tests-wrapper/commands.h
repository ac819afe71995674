// railyard-validate's commands behind its main (railyard_validate_main.cpp is its command line):
// each takes what the flags gave and returns the exit status.
#pragma once

#include <optional>
#include <string>

#include "nccl-tests-wrapper/apply/command.h"
#include "nccl-tests-wrapper/fleet/run.h"

namespace railyard::validate {

struct RunRequest {
  std::string config_path;
  std::string sysfs_root, rails;  // override the config's when given
  std::optional<int> rank;        // else the launcher's environment's, else 0
  struct {
    std::string report, junit, patch, timeline;
  } out;
};

struct FleetOutputs {
  std::string report, junit, patches, heatmaps;
};

// nccl-tests output (a file, or - for stdin) as JSON; 0 when rows were read, 2 otherwise.
int cmd_parse(const std::string& file);
// 0 when the validation config is valid, 2 with its first error otherwise.
int cmd_config(const std::string& path);
// The node's checks and benchmarks: 0 pass, 1 fail, 2 could not run (or --apply refused).
int cmd_run(const RunRequest& r, const ApplySettings& apply);
// Rank 0: the fleet's report and exit status (0 healthy, 1 culprits, 2 could not run); the
// other ranks 0 once served.
int cmd_fleet(const FleetSettings& s, const FleetOutputs& out, const ApplySettings& apply);

// This node's name for --apply and the fleet report: NODE_NAME, else the hostname in lower case.
std::string default_node_name();

}  // namespace railyard::validate
