// railyard-device-plugin: advertises GPU+NIC bundles and per-rail VF pools to the kubelet
// (device plugin API v1beta1). Flags and resource names: DESIGN.md; behaviour: plugin.h.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/log_escape.h"
#include "deviceplugin/allocate.h"
#include "deviceplugin/plugin.h"
#include "deviceplugin/preferred.h"

namespace dp = railyard::deviceplugin;
namespace topo = railyard::topology;

namespace {

const char* kind_name(dp::PoolKind k) {
  switch (k) {
    case dp::PoolKind::kBundle:
      return "bundle";
    case dp::PoolKind::kVf:
      return "vf";
    case dp::PoolKind::kPf:
      return "pf";
  }
  return "?";
}

// What the plugin would advertise, and what a container asking for every device of a pool
// (as GetPreferredAllocation orders it) would get.
int dry_run(const dp::PluginOptions& opt) {
  const topo::Sysfs sysfs(topo::sysfs_root_from(opt.sysfs_root));
  const dp::View v = dp::load_view(opt, sysfs);
  for (const auto& w : v.pools.warnings) std::cout << "warning: " << w << "\n";
  const dp::HealthChecker checker(sysfs, *v.node, v.pools.pools);
  const auto health = checker.check();
  for (const auto& pool : v.pools.pools) {
    std::cout << "\n"
              << pool.resource << " (" << kind_name(pool.kind) << ", " << pool.devices.size()
              << " devices, socket " << dp::socket_name_for(pool.resource) << ")\n";
    std::cout << "  " << std::left << std::setw(14) << "DEVICE ID" << std::setw(6) << "RAIL"
              << std::setw(6) << "NUMA" << std::setw(10) << "RDMA" << std::setw(15) << "GPU"
              << std::setw(6) << "PATH"
              << "HEALTH\n";
    for (const auto& d : pool.devices) {
      const auto& h = health.at(pool.resource).at(d.id);
      const auto& fn = v.node->function(d.fn);
      std::cout << "  " << std::setw(14) << d.id << std::setw(6) << d.rail << std::setw(6)
                << (d.numa < 0 ? std::string("-") : std::to_string(d.numa)) << std::setw(10)
                << fn.rdma_name() << std::setw(15)
                << (d.gpu < 0 ? std::string("-")
                              : v.node->gpus[static_cast<size_t>(d.gpu)].pci.address.to_string())
                << std::setw(6) << (d.gpu < 0 ? "-" : topo::to_string(d.path))
                << (h.healthy ? "Healthy" : "Unhealthy: " + h.reason) << "\n";
    }
  }
  for (const auto& pool : v.pools.pools) {
    std::vector<std::string> ids;
    for (const auto& d : pool.devices) ids.push_back(d.id);
    const auto chosen = dp::preferred_allocation(pool, *v.node, ids, {},
                                                 static_cast<int>(std::min<size_t>(ids.size(), 8)));
    std::cout << "\nExample Allocate of " << pool.resource << " for " << chosen.size()
              << " device(s):\n"
              << dp::to_json(dp::build_allocation(pool, *v.node, *v.config, chosen)).dump(2)
              << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard-device-plugin: GPU+NIC bundles and per-rail VF pools for the kubelet"};
  dp::PluginOptions opt;
  bool dry = false;
  std::string log_level = "info", kubelet_dir = opt.kubelet_dir, devinfo_dir = opt.devinfo_dir;
  app.add_option("--config", opt.config_file,
                 "pool configuration (JSON); default: bundle + per-rail VF pools");
  app.add_option("--kubelet-dir", kubelet_dir, "the kubelet's device-plugins directory")
      ->capture_default_str();
  app.add_option("--sysfs-root", opt.sysfs_root,
                 "read sysfs under DIR (default RAILYARD_SYSFS_ROOT, else /)");
  app.add_option("--rails", opt.rails_file,
                 "rails file (default RAILYARD_RAILS_FILE, else /etc/railyard/rails.json)");
  app.add_option("--devinfo-dir", devinfo_dir, "where Multus device-info files are written")
      ->capture_default_str();
  app.add_option("--metrics-addr", opt.metrics_addr,
                 "HOST:PORT for /metrics and /healthz; empty: off")
      ->capture_default_str();
  std::string findings_file = opt.findings_file;
  app.add_option("--validation-findings", findings_file,
                 "the validation's findings on this node (railyard-validate run --apply "
                 "--findings): a failed rail's VFs and bundles are Unhealthy until a run passes; "
                 "empty: not read")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warning, error")
      ->capture_default_str();
  app.add_flag("--dry-run", dry, "print the resources and an example Allocate, then exit");
  CLI11_PARSE(app, argc, argv);
  opt.kubelet_dir = kubelet_dir;
  opt.findings_file = findings_file;
  opt.devinfo_dir = devinfo_dir;

  // Logs on stderr, so that --dry-run's stdout is only its report.
  spdlog::set_default_logger(spdlog::stderr_color_mt("railyard-device-plugin"));
  railyard::escape_default_log_messages();  // peers' and the API server's text, escaped
  spdlog::set_level(spdlog::level::from_str(log_level == "warning" ? "warn" : log_level));

  try {
    if (dry) return dry_run(opt);
    // Blocked before any thread starts, so that every thread leaves them to the signalfd.
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    const int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    dp::Plugin plugin(opt);
    plugin.start();
    return plugin.run(sfd);
  } catch (const dp::StartError& e) {
    spdlog::error("cannot start: {}", e.what());
    std::cerr << "railyard-device-plugin: " << e.what() << "\n";
    return 1;
  }
}
