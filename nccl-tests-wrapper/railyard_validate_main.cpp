// railyard-validate: is every rail of this node fit for jobs? `run` checks and benchmarks the
// node and gives a verdict (exit 0 pass, 1 fail, 2 could not run); `fleet` tests every rail of
// every pair of nodes and names the culprits; `parse` reads nccl-tests output of any generation.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/log_escape.h"
#include "nccl-tests-wrapper/apply/command.h"
#include "nccl-tests-wrapper/fleet/run.h"
#include "nccl-tests-wrapper/nccl/parse.h"
#include "nccl-tests-wrapper/run/report.h"
#include "rdma/bench/options.h"
#include "rdma/run/launch.h"

namespace v = railyard::validate;

namespace {

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
  const auto result = v::parse_nccl_tests(ss.str());
  std::cout << v::to_json(result).dump(2) << "\n";
  if (!result.rows.empty()) return 0;
  std::cerr << "railyard-validate parse: no results rows in " << file;
  for (const auto& e : result.errors) std::cerr << "; " << railyard::escape_controls(e);
  std::cerr << "\n";
  return 2;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) std::cerr << "railyard-validate: cannot write " << path << "\n";
  return static_cast<bool>(out);
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

// `run`'s rank under a launcher (see Config::rank); 0 when run alone.
int launcher_rank() {
  try {
    return railyard::rdma::launcher_rank(railyard::rdma::bench::env).value_or(0);
  } catch (const std::exception& e) {
    std::cerr << "railyard-validate run: " << railyard::escape_controls(e.what()) << "\n";
    std::exit(2);
  }
}

struct FleetOutputs {
  std::string report, junit, patches, heatmaps;
};

int cmd_fleet(const v::FleetSettings& s, const FleetOutputs& out, const v::ApplySettings& apply) {
  std::optional<v::FleetReport> report;
  try {
    report = v::run_fleet(s, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "railyard-validate fleet: " << railyard::escape_controls(e.what()) << "\n";
    return 2;
  }
  if (!report) return 0;  // not rank 0: rank 0 has the verdict
  const bool ran = report->could_not_run.empty();
  if (ran || !report->results.empty()) v::print_fleet_summary(*report, std::cout);
  if (!ran) std::cerr << "railyard-validate fleet: " << v::fleet_not_run_text(*report) << "\n";
  // Written even when the fleet could not run: a pipeline collecting them finds why.
  bool written = true;
  if (!out.report.empty()) written &= write_file(out.report, v::fleet_json(*report).dump(2) + "\n");
  if (!out.junit.empty()) written &= write_file(out.junit, v::fleet_junit(*report));
  if (!out.patches.empty())
    written &= write_file(out.patches, v::fleet_node_patches(*report).dump(2) + "\n");
  if (!out.heatmaps.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out.heatmaps, ec);
    for (int k = 0; k < report->rails; ++k)
      written &= write_file(out.heatmaps + "/rail-" + std::to_string(k) + ".svg",
                            v::fleet_heatmap_svg(*report, k));
  }
  if (apply.apply) {
    if (!ran)
      std::cout << "apply: changed nothing: the fleet could not run\n";
    else if (!v::apply_all(apply, v::judge_fleet(*report), "fleet"))
      return 2;
  }
  if (!written || !ran) return 2;
  return report->culprits.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard-validate: is every rail of this node fit for jobs?"};
  app.require_subcommand(1);
  std::string file, config_path, report_path, junit_path, patch_path, sysfs_root, rails,
      timeline_path;
  auto* parse = app.add_subcommand(
      "parse", "Read nccl-tests output (any generation, or -J JSON) and print JSON");
  parse->add_option("FILE", file, "nccl-tests output; - for stdin")->required();
  auto* check = app.add_subcommand(
      "config", "Read a validation config and name its first error; exit 0 when it is valid");
  check->add_option("FILE", config_path, "validation config (JSON)")->required();
  auto* run = app.add_subcommand(
      "run", "Check the node and benchmark its rails; exit 0 pass, 1 fail, 2 could not run");
  run->add_option("--config", config_path, "validation config (JSON)")->required();
  run->add_option("--report", report_path, "write the report as JSON");
  run->add_option("--junit", junit_path, "write the report as JUnit XML");
  run->add_option("--node-patch", patch_path,
                  "write a kubectl node patch (label railyard.io/validated)");
  run->add_option("--timeline", timeline_path,
                  "write an SVG plot of each rail's throughput during the run across all rails");
  run->add_option("--sysfs-root", sysfs_root, "overrides the config's sysfsRoot");
  run->add_option("--rails", rails, "overrides the config's railsFile");
  v::ApplySettings run_apply, fleet_apply;
  v::add_apply_options(run, run_apply);
  run_apply.node = default_node_name();
  run->add_option("--findings", run_apply.findings,
                  "--apply: also write the failed rails to FILE on this node, for the device "
                  "plugin (--validation-findings) to mark their VFs and bundles Unhealthy")
      ->needs(run->get_option("--apply"));
  run->add_option("--node-name", run_apply.node,
                  "--apply: this node's name (default: NODE_NAME, else the hostname)");
  std::optional<int> run_rank;
  run->add_option("--rank", run_rank,
                  "this rank when one validate runs per node (or OMPI_COMM_WORLD_RANK, "
                  "JOB_COMPLETION_INDEX, RANK): only rank 0's benchmark prints results, the "
                  "others are judged by exit status")
      ->check(CLI::NonNegativeNumber);
  v::FleetSettings fleet_settings;
  FleetOutputs fleet_out;
  auto* fleet = app.add_subcommand(
      "fleet",
      "Test every rail of every pair of nodes (one rank per node) and name the bad NIC, cable, "
      "leaf, miswired rail or node; exit 0 healthy, 1 culprits named, 2 could not run");
  {
    auto& b = fleet_settings.bench;
    b.max_bytes = "16M";
    b.iters = 10;
    b.warmup = 3;
    b.timeout_s = 30;
    b.streams = 1;
    fleet_settings.node_name = default_node_name();
    fleet->add_option("--rank", b.rank,
                      "this rank (or OMPI_COMM_WORLD_RANK, JOB_COMPLETION_INDEX, RANK)");
    fleet->add_option("--world-size", b.world,
                      "number of ranks, one per node (or OMPI_COMM_WORLD_SIZE, WORLD_SIZE)");
    fleet->add_option("--rendezvous", b.rendezvous,
                      "HOST:PORT where rank 0 coordinates (or MASTER_ADDR/MASTER_PORT)");
    fleet->add_option("--rails", b.rails,
                      "comma-separated rail interfaces, IPv4 addresses or RDMA devices, in rail "
                      "order (default: NCCL_IB_HCA)");
    fleet->add_option("--transport", b.transport, "tcp or verbs (RDMA RC)")
        ->check(CLI::IsMember({"tcp", "verbs"}));
    fleet->add_option("--node-name", fleet_settings.node_name,
                      "this node's name in the report (default: NODE_NAME, else the hostname)");
    fleet->add_option("-s,--size", b.max_bytes, "message size per pair and rail (16M)");
    fleet->add_option("-n", b.iters, "timed iterations per pair and rail");
    fleet->add_option("-w", b.warmup, "warmup iterations");
    fleet->add_option("-c", b.check, "check every byte (1) or not (0)");
    fleet->add_option("--streams", b.streams, "tcp: connections per rail and direction")
        ->check(CLI::Range(1, 64));
    fleet->add_option("--gid-index", b.gid_index,
                      "verbs: GID index (default: RoCE v2 of the rail)");
    fleet->add_option("--timeout", b.timeout_s,
                      "seconds to wait for a rank to join or a rail to connect");
    fleet->add_option("--token-file", b.token_file,
                      "the ranks' shared secret, proved on every connection (or "
                      "RAILYARD_TOKEN_FILE)");
    fleet
        ->add_option("--repeat", fleet_settings.repeat,
                     "extra runs of each round that holds a suspect pair")
        ->check(CLI::Range(0, 10));
    fleet
        ->add_option("--slow-fraction", fleet_settings.slow_fraction,
                     "a pair below this fraction of the fleet's median pair is slow")
        ->check(CLI::Range(0.0, 1.0));
    fleet->add_flag("!--no-probe", fleet_settings.probe,
                    "do not ask suspect NICs which leaf they hear (ARP; needs CAP_NET_RAW)");
    fleet
        ->add_option("--mode", fleet_settings.mode,
                     "pairwise: every pair of nodes (N-1 rounds); bisect: ring allreduces over "
                     "halves to corner slow NICs and nodes in O(log N) runs, then pairs only "
                     "for the suspects (blind to a cable bad for one pair only)")
        ->check(CLI::IsMember({"pairwise", "bisect"}));
    fleet->add_option("--report", fleet_out.report, "rank 0: write the report as JSON");
    fleet->add_option("--junit", fleet_out.junit, "rank 0: write the culprits as JUnit XML");
    fleet->add_option("--node-patches", fleet_out.patches,
                      "rank 0: write kubectl label/annotation patches and taint commands (JSON)");
    fleet->add_option("--heatmaps", fleet_out.heatmaps,
                      "rank 0: write DIR/rail-K.svg, each rail's node x node bandwidth");
    v::add_apply_options(fleet, fleet_apply);
  }
  CLI11_PARSE(app, argc, argv);
  if (*fleet) return cmd_fleet(fleet_settings, fleet_out, fleet_apply);
  if (*parse) return cmd_parse(file);
  if (*check) {
    try {
      v::Config::load(config_path);
    } catch (const v::ConfigError& e) {
      std::cerr << "railyard-validate config: " << e.what() << "\n";
      return 2;
    }
    std::cout << config_path << ": ok\n";
    return 0;
  }

  v::Config cfg;
  try {
    cfg = v::Config::load(config_path);
  } catch (const v::ConfigError& e) {
    std::cerr << "railyard-validate run: " << railyard::escape_controls(e.what()) << "\n";
    return 2;
  }
  if (!sysfs_root.empty()) cfg.sysfs_root = sysfs_root;
  if (!rails.empty()) cfg.rails_file = rails;
  cfg.rank = run_rank ? *run_rank : launcher_rank();
  const v::Report report = v::validate_node(cfg);
  v::print_report(report, std::cout);
  bool written = true;
  if (!report_path.empty())
    written &= write_file(report_path, v::report_json(report).dump(2) + "\n");
  if (!junit_path.empty()) written &= write_file(junit_path, v::junit_xml(report));
  if (!patch_path.empty()) written &= write_file(patch_path, v::node_patch(report).dump(2) + "\n");
  if (!timeline_path.empty())
    written &= write_file(timeline_path, v::timeline_svg(report.timeline));
  if (!written) return 2;
  if (run_apply.apply && v::apply_node_run(run_apply, report, cfg.rank) != 0) return 2;
  return static_cast<int>(report.verdict);
}
