#include "nccl-tests-wrapper/commands.h"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/log_escape.h"
#include "nccl-tests-wrapper/nccl/parse.h"
#include "nccl-tests-wrapper/run/report.h"
#include "rdma/bench/options.h"
#include "rdma/run/launch.h"

namespace railyard::validate {
namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) std::cerr << "railyard-validate: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

// `run`'s rank under a launcher (see Config::rank); 0 when run alone.
int launcher_rank() {
  try {
    return railyard::rdma::launcher_rank(railyard::rdma::bench::env).value_or(0);
  } catch (const std::exception& e) {
    std::cerr << "railyard-validate run: " << railyard::escape_controls(e.what()) << "\n";
    std::exit(2);
  }
}

}  // namespace

int cmd_parse(const std::string& file) {
  std::stringstream ss;
  if (file == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "railyard-validate parse: cannot read " << file << "\n";
      return 2;
    }
    ss << in.rdbuf();
  }
  const auto result = parse_nccl_tests(ss.str());
  std::cout << to_json(result).dump(2) << "\n";
  if (!result.rows.empty()) return 0;
  std::cerr << "railyard-validate parse: no results rows in " << file;
  for (const auto& e : result.errors) std::cerr << "; " << railyard::escape_controls(e);
  std::cerr << "\n";
  return 2;
}

int cmd_config(const std::string& path) {
  try {
    Config::load(path);
  } catch (const ConfigError& e) {
    std::cerr << "railyard-validate config: " << e.what() << "\n";
    return 2;
  }
  std::cout << path << ": ok\n";
  return 0;
}

int cmd_run(const RunRequest& r, const ApplySettings& apply) {
  Config cfg;
  try {
    cfg = Config::load(r.config_path);
  } catch (const ConfigError& e) {
    std::cerr << "railyard-validate run: " << railyard::escape_controls(e.what()) << "\n";
    return 2;
  }
  if (!r.sysfs_root.empty()) cfg.sysfs_root = r.sysfs_root;
  if (!r.rails.empty()) cfg.rails_file = r.rails;
  cfg.rank = r.rank ? *r.rank : launcher_rank();
  const Report report = validate_node(cfg);
  print_report(report, std::cout);
  bool written = true;
  if (!r.out.report.empty())
    written &= write_file(r.out.report, report_json(report).dump(2) + "\n");
  if (!r.out.junit.empty()) written &= write_file(r.out.junit, junit_xml(report));
  if (!r.out.patch.empty()) written &= write_file(r.out.patch, node_patch(report).dump(2) + "\n");
  if (!r.out.timeline.empty()) written &= write_file(r.out.timeline, timeline_svg(report.timeline));
  if (!written) return 2;
  if (apply.apply && apply_node_run(apply, report, cfg.rank) != 0) return 2;
  return static_cast<int>(report.verdict);
}

int cmd_fleet(const FleetSettings& s, const FleetOutputs& out, const ApplySettings& apply) {
  std::optional<FleetReport> report;
  try {
    report = run_fleet(s, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "railyard-validate fleet: " << railyard::escape_controls(e.what()) << "\n";
    return 2;
  }
  if (!report) return 0;  // not rank 0: rank 0 has the verdict
  const bool ran = report->could_not_run.empty();
  if (ran || !report->results.empty()) print_fleet_summary(*report, std::cout);
  if (!ran) std::cerr << "railyard-validate fleet: " << fleet_not_run_text(*report) << "\n";
  // Written even when the fleet could not run: a pipeline collecting them finds why.
  bool written = true;
  if (!out.report.empty()) written &= write_file(out.report, fleet_json(*report).dump(2) + "\n");
  if (!out.junit.empty()) written &= write_file(out.junit, fleet_junit(*report));
  if (!out.patches.empty())
    written &= write_file(out.patches, fleet_node_patches(*report).dump(2) + "\n");
  if (!out.heatmaps.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out.heatmaps, ec);
    for (int k = 0; k < report->rails; ++k)
      written &= write_file(out.heatmaps + "/rail-" + std::to_string(k) + ".svg",
                            fleet_heatmap_svg(*report, k));
  }
  if (apply.apply) {
    if (!ran)
      std::cout << "apply: changed nothing: the fleet could not run\n";
    else if (!apply_all(apply, judge_fleet(*report), "fleet"))
      return 2;
  }
  if (!written || !ran) return 2;
  return report->culprits.empty() ? 0 : 1;
}

std::string default_node_name() {
  if (const char* n = std::getenv("NODE_NAME"); n && *n) return n;  // the Job's downward API
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  // As the kubelet names a Node after its host: lower case.
  std::string name = host;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace railyard::validate
