// railyard-validate run: node checks from topology/, then benchmark runs per rail (one GPU and
// its bundle NIC, NCCL_IB_HCA restricted to the rail) and across all rails, judged on
// large-message rows only (never the sweep average), each failing run repeated before failing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/checks/finding.h"
#include "nccl-tests-wrapper/checks/timeline.h"
#include "nccl-tests-wrapper/nccl/nccl_log.h"
#include "nccl-tests-wrapper/nccl/parse.h"
#include "nccl-tests-wrapper/run/config.h"

namespace railyard::validate {

struct RunOutcome {
  std::string name;  // "rail 3 (mlx5_5)" or "all rails"
  int rail = -1;     // 3; -1 for the run across all rails
  std::string nccl_ib_hca, cuda_visible_devices;
  int attempts = 0;
  int exit_code = 0;
  std::optional<double> busbw;  // the lowest busbw among large-message rows
  std::vector<std::string> problems;
  ParseResult parsed;
  NcclNetUse nccl;                        // what NCCL's INFO lines say it did
  std::vector<std::string> rdma_devices;  // the rails under test
  bool could_not_run = false;             // the command could not be started
  std::string last_words;                 // the output's last line, for a failed run's report
  bool measured_by_rank0 = false;         // this rank printed no results, rightly (Config::rank)
};

enum class Verdict { kPass = 0, kFail = 1, kCouldNotRun = 2 };

// Every rail's counters, read before the benchmarks and after them.
struct RailCounterDelta {
  std::string rail, device, netdev;
  double seconds = 0;
  // "counters/symbol_error", "hw_counters/...", "carrier_changes" -> growth over the run
  std::map<std::string, int64_t> delta;
};

struct Report {
  std::vector<Finding> checks;
  std::vector<RailCounterDelta> counters;
  Timeline timeline;  // per-rail throughput during the run across all rails
  std::vector<RunOutcome> runs;
  Verdict verdict = Verdict::kPass;
  std::string reason;  // for kCouldNotRun
};

Report validate_node(const Config& config);
const char* to_string(Verdict v);

}  // namespace railyard::validate
