// railyard-validate: is every rail of this node fit for jobs? `run` checks and benchmarks the
// node and gives a verdict (exit 0 pass, 1 fail, 2 could not run); `fleet` tests every rail of
// every pair of nodes and names the culprits; `parse` reads nccl-tests output of any generation.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "nccl-tests-wrapper/commands.h"

namespace v = railyard::validate;

int main(int argc, char** argv) {
  CLI::App app{"railyard-validate: is every rail of this node fit for jobs?"};
  app.require_subcommand(1);
  std::string file, config_path;
  v::RunRequest req;
  auto* parse = app.add_subcommand(
      "parse", "Read nccl-tests output (any generation, or -J JSON) and print JSON");
  parse->add_option("FILE", file, "nccl-tests output; - for stdin")->required();
  auto* check = app.add_subcommand(
      "config", "Read a validation config and name its first error; exit 0 when it is valid");
  check->add_option("FILE", config_path, "validation config (JSON)")->required();
  auto* run = app.add_subcommand(
      "run", "Check the node and benchmark its rails; exit 0 pass, 1 fail, 2 could not run");
  run->add_option("--config", req.config_path, "validation config (JSON)")->required();
  run->add_option("--report", req.out.report, "write the report as JSON");
  run->add_option("--junit", req.out.junit, "write the report as JUnit XML");
  run->add_option("--node-patch", req.out.patch,
                  "write a kubectl node patch (label railyard.io/validated)");
  run->add_option("--timeline", req.out.timeline,
                  "write an SVG plot of each rail's throughput during the run across all rails");
  run->add_option("--sysfs-root", req.sysfs_root, "overrides the config's sysfsRoot");
  run->add_option("--rails", req.rails, "overrides the config's railsFile");
  v::ApplySettings run_apply, fleet_apply;
  v::add_apply_options(run, run_apply);
  run_apply.node = v::default_node_name();
  run->add_option("--findings", run_apply.findings,
                  "--apply: also write the failed rails to FILE on this node, for the device "
                  "plugin (--validation-findings) to mark their VFs and bundles Unhealthy")
      ->needs(run->get_option("--apply"));
  run->add_option("--node-name", run_apply.node,
                  "--apply: this node's name (default: NODE_NAME, else the hostname)");
  run->add_option("--rank", req.rank,
                  "this rank when one validate runs per node (or OMPI_COMM_WORLD_RANK, "
                  "JOB_COMPLETION_INDEX, RANK): only rank 0's benchmark prints results, the "
                  "others are judged by exit status")
      ->check(CLI::NonNegativeNumber);
  v::FleetSettings fleet_settings;
  v::FleetOutputs fleet_out;
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
    fleet_settings.node_name = v::default_node_name();
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
  if (*fleet) return v::cmd_fleet(fleet_settings, fleet_out, fleet_apply);
  if (*parse) return v::cmd_parse(file);
  if (*check) return v::cmd_config(config_path);
  return v::cmd_run(req, run_apply);
}
