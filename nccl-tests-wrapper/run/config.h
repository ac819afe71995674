// railyard-validate run's configuration (JSON; every field optional unless noted):
//   {"sysfsRoot": "/", "railsFile": "/etc/railyard/rails.json",
//    "checks": {"portActive": true, "expectedRateGbps": 400, "pcieNotDegraded": true,
//               "minMtu": 4092, "roceGid": true, "maxPathClass": "PXB", "gpuDirect": "warn",
//               "fabricMtu": 4096,                  // IB MTU the fabric runs; 0: not checked
//               "roceQos": {"priority": 3, "ecn": true},   // or false
//               "pcieAcs": true,                    // ACS and hop links, GPU to NIC
//               "portErrors": {"thresholds": {"np_cnp_sent": 100000}},  // or false
//               "linkFlaps": {"max": 0},            // or false
//               "ncclPath": true,                   // read NCCL's INFO log of every run
//               "firmware": {"version": "28.39.1002"},  // or true (one version), false
//               "timelineHz": 10},                  // 0: no timeline
//    "benchmark": {"command": "/opt/nccl-tests/build/all_reduce_perf",
//                  "args": ["-b", "256M", "-e", "8G", "-f", "2", "-g", "1"],
//                  "perRail": true, "allRails": true,
//                  "largeMessageBytes": 268435456,      // rows judged: size >= this
//                  "minBusbwGbps": 40,                  // per-rail floor, GB/s
//                  "minFractionOfLineRate": 0.75,       // per-rail floor vs port rate (bytes/s)
//                  "minFractionOfMedianRail": 0.9,      // vs the median rail
//                  "allRailsMinBusbwGbps": 300,
//                  "allRailsScale": "rails",            // what all rails should move vs one:
//                                                       // "rails" = rail count x the median rail
//                                                       // (one rank drives every rail), "one" =
//                                                       // the median rail (one GPU per rail)
//                  "allRailsMinFraction": 0.75,         // of that
//                  "repeats": 2,                        // re-runs of a failing rail, at most
//                  "timeoutSeconds": 600,
//                  "env": {"NCCL_DEBUG": "WARN"}}}
// gpuDirect: "off", "warn" or "require" nvidia_peermem (or dma-buf support) on the node.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/checks/settings.h"

namespace railyard::validate {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Benchmark {
  std::string command;  // empty: node checks only
  std::vector<std::string> args;
  bool per_rail = true, all_rails = true;
  int64_t large_message_bytes = 256LL << 20;
  std::optional<double> min_busbw_gbps, min_fraction_of_line_rate, all_rails_min_busbw_gbps;
  double min_fraction_of_median_rail = 0.9;
  std::string all_rails_scale = "rails";  // or "one"
  double all_rails_min_fraction = 0.75;
  int repeats = 2;
  int timeout_seconds = 600;
  std::map<std::string, std::string> env;
};

struct Config {
  std::string sysfs_root;
  std::string rails_file;
  Checks checks;
  Benchmark benchmark;
  // This process's rank when a launcher started one validate per node (an Indexed Job, mpirun):
  // as in nccl-tests, only rank 0's benchmark prints the results, so the other ranks judge their
  // run by its exit status alone. Not in the file: from --rank or the launcher's environment.
  int rank = 0;
  static Config parse(const nlohmann::json& j);  // throws ConfigError naming the field
  static Config load(const std::string& path);
};

}  // namespace railyard::validate
