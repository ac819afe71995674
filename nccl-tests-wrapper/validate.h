// railyard-validate run: node checks from topology/, then benchmark runs per rail (one GPU and
// its bundle NIC, NCCL_IB_HCA restricted to the rail) and across all rails, judged on
// large-message rows only (never the sweep average), each failing run repeated before failing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/config.h"
#include "nccl-tests-wrapper/parse.h"

namespace railyard::validate {

struct Finding {
  std::string subject;  // "rail 3 (mlx5_5)" or "node"
  std::string check;    // "port", "rate", "pcie", "mtu", "roce-gid", "path", "gpudirect"
  bool ok = true;
  bool warning = false;  // not ok, but not failing the node
  std::string detail;
};

struct RunOutcome {
  std::string name;  // "rail 3 (mlx5_5)" or "all rails"
  std::string nccl_ib_hca, cuda_visible_devices;
  int attempts = 0;
  int exit_code = 0;
  std::optional<double> busbw;  // the lowest busbw among large-message rows
  std::vector<std::string> problems;
  ParseResult parsed;
  bool could_not_run = false;  // the command could not be started
};

enum class Verdict { kPass = 0, kFail = 1, kCouldNotRun = 2 };

struct Report {
  std::vector<Finding> checks;
  std::vector<RunOutcome> runs;
  Verdict verdict = Verdict::kPass;
  std::string reason;  // for kCouldNotRun
};

Report validate_node(const Config& config);
const char* to_string(Verdict v);

}  // namespace railyard::validate
