// railyard-dra-driver: the DRA driver (resource.k8s.io/v1). `slices` prints the ResourceSlices
// this node would publish; `publish` sends them to the API server and republishes when the
// devices or their health change; `run` does that and serves the kubelet as its DRA plugin
// (NodePrepareResources), reporting each NIC's place in its pod in the claim's status.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "common/log_escape.h"
#include "dra/driver.h"

namespace dra = railyard::dra;

int main(int argc, char** argv) {
  CLI::App app{"railyard-dra-driver: rails and GPU+NIC bundles as DRA devices"};
  app.require_subcommand(1);
  dra::Source src;
  const char* env_node = std::getenv("NODE_NAME");
  dra::SliceOptions opt{.node_name = env_node ? env_node : ""};
  bool keep_unhealthy = false;
  std::string unhealthy_mode = "taint", taint_effect = "NoSchedule";
  dra::PublishOptions po;
  std::string log_level = "info";
  auto common = [&](CLI::App* cmd) {
    cmd->add_option("--sysfs-root", src.sysfs_flag,
                    "Read DIR/sys instead of /sys (env RAILYARD_SYSFS_ROOT)");
    cmd->add_option("--rails", src.rails_flag,
                    "Rails file (env RAILYARD_RAILS_FILE, default /etc/railyard/rails.json)");
    cmd->add_option("--node", opt.node_name, "Node name (env NODE_NAME)");
    cmd->add_option("--unhealthy", unhealthy_mode,
                    "An unhealthy device: taint (kept, tainted), mark (kept, railyard.io/healthy "
                    "false) or drop (left out; for API servers without device taints)")
        ->capture_default_str()
        ->check(CLI::IsMember({"taint", "mark", "drop"}));
    cmd->add_option("--taint-effect", taint_effect,
                    "The taint's effect: NoSchedule (running pods stay), NoExecute (pods holding "
                    "the device are evicted) or None")
        ->capture_default_str()
        ->check(CLI::IsMember({"NoSchedule", "NoExecute", "None"}));
    cmd->add_flag("--keep-unhealthy", keep_unhealthy, "The same as --unhealthy mark (older flag)");
  };
  auto publishing = [&](CLI::App* cmd) {
    common(cmd);
    cmd->add_option("--interval", po.interval_ms, "Look at sysfs and health every N ms")
        ->capture_default_str()
        ->check(CLI::Range(50, 3600000));
    cmd->add_option("--resync", po.resync_s,
                    "Compare the API server's slices with those published every N s (0: never)")
        ->capture_default_str();
    cmd->add_option("--server", po.api.server,
                    "API server URL (default: in-cluster, KUBERNETES_SERVICE_HOST/PORT)");
    cmd->add_option("--token-file", po.api.token_file,
                    "Bearer token file (default: the service account's)");
    cmd->add_option("--ca-file", po.api.ca_file, "CA bundle (default: the service account's)");
    cmd->add_flag("--once", po.once, "Publish once and exit (1 when that failed)");
    cmd->add_flag("--delete-on-exit", po.delete_on_exit,
                  "On SIGTERM or SIGINT delete the pool's slices before exiting");
    cmd->add_option("--log-level", log_level, "trace, debug, info, warning, error")
        ->capture_default_str();
  };
  auto* slices = app.add_subcommand("slices", "Print this node's ResourceSlices (a v1 List)");
  common(slices);
  slices->add_option("--generation", opt.generation, "spec.pool.generation")->capture_default_str();
  auto* publish = app.add_subcommand(
      "publish", "Publish this node's ResourceSlices to the API server and keep them current");
  auto* run = app.add_subcommand(
      "run", "publish, and serve the kubelet as the railyard.io DRA plugin (the DaemonSet's)");
  for (auto* cmd : {publish, run}) publishing(cmd);
  run->add_option("--registry-dir", po.plugin.registry_dir,
                  "The kubelet's plugin registration directory")
      ->capture_default_str();
  run->add_option("--plugin-dir", po.plugin.plugin_dir, "Where the DRA service's socket goes")
      ->capture_default_str();
  run->add_option("--cdi-dir", po.plugin.cdi_dir, "CDI spec directory the runtime reads")
      ->capture_default_str();
  run->add_option("--state-dir", po.plugin.state_dir,
                  "Prepared claims, and the files railyard-cni reads (its draDir)")
      ->capture_default_str();
  run->add_option(
         "--gpu-devices", po.gpu_devices,
         "A claimed GPU as device nodes (nodes), CDI names (cdi) or NVIDIA_VISIBLE_DEVICES "
         "only (env)")
      ->capture_default_str()
      ->check(CLI::IsMember({"nodes", "cdi", "env"}));
  CLI11_PARSE(app, argc, argv);
  if (opt.node_name.empty()) {
    std::cerr << "railyard-dra-driver: --node or NODE_NAME is required\n";
    return 2;
  }
  opt.unhealthy = keep_unhealthy || unhealthy_mode == "mark" ? dra::Unhealthy::kMark
                  : unhealthy_mode == "drop"                 ? dra::Unhealthy::kDrop
                                                             : dra::Unhealthy::kTaint;
  opt.effect = taint_effect == "NoExecute" ? dra::TaintEffect::kNoExecute
               : taint_effect == "None"    ? dra::TaintEffect::kNone
                                           : dra::TaintEffect::kNoSchedule;
  if (*slices) return dra::run_slices(src, opt);
  spdlog::set_default_logger(spdlog::stderr_color_mt("railyard-dra-driver"));
  railyard::escape_default_log_messages();  // peers' and the API server's text, escaped
  spdlog::set_level(spdlog::level::from_str(log_level == "warning" ? "warn" : log_level));
  if (*publish) return dra::run_publish(src, opt, po);
  if (*run) {
    po.kubelet_plugin = true;
    po.plugin.prepare.gpu_devices =
        po.gpu_devices == "nodes" ? railyard::deviceplugin::GpuDevices::kNodes
        : po.gpu_devices == "cdi" ? railyard::deviceplugin::GpuDevices::kCdi
                                  : railyard::deviceplugin::GpuDevices::kEnv;
    return dra::run_publish(src, opt, po);
  }
  return 2;
}
