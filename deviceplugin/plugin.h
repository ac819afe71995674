// railyard-device-plugin's life: discover the node, serve one socket per pool, register each
// with the kubelet, and keep them right while things change. One thread runs the loop; it waits
// on signals, inotify (the kubelet's directory, the config file), netlink link events and the
// health timer, so every reaction is immediate:
//   kubelet.sock created          -> register every resource again (a kubelet restart)
//   our socket deleted            -> serve it again, then register
//   netlink link event / timer    -> health pass; changes reach ListAndWatch at once
//   a PF's sriov_numvfs changed   -> re-discover (VFs created or removed)
//   SIGHUP or the config changed  -> reload the config and re-discover
//   SIGTERM / SIGINT              -> stop serving, remove the sockets, exit 0
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "deviceplugin/config.h"
#include "deviceplugin/health.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/pools.h"
#include "deviceplugin/rail_findings_file.h"
#include "deviceplugin/server.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::deviceplugin {

struct PluginOptions {
  std::string config_file;  // empty: the built-in default
  std::filesystem::path kubelet_dir = "/var/lib/kubelet/device-plugins";
  std::string sysfs_root;  // flag value; RAILYARD_SYSFS_ROOT, then "/"
  std::string rails_file;  // flag value; RAILYARD_RAILS_FILE, then /etc/railyard/rails.json
  std::filesystem::path devinfo_dir = "/var/run/k8s.cni.cncf.io/devinfo/dp";
  std::string metrics_addr = ":9408";  // empty: no metrics endpoint
  // What the validation found (railyard-validate run --apply --findings); empty: not read.
  std::filesystem::path findings_file = "/var/lib/railyard/validation/findings.json";
};

// A start that cannot go on: bad config, rails file, or sysfs.
class StartError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The node as the plugin sees it: the model and the pools built on it.
struct View {
  std::shared_ptr<const topology::Node> node;
  std::shared_ptr<const Config> config;
  PoolSet pools;
};

// Reads the config (options.config_file) and discovers the node. Throws StartError.
View load_view(const PluginOptions& options, const topology::Sysfs& sysfs);
View load_view(const PluginOptions& options, const topology::Sysfs& sysfs,
               std::shared_ptr<const Config> config);

class Plugin {
 public:
  explicit Plugin(PluginOptions options);
  ~Plugin();
  // Discovers, serves and registers. Throws StartError.
  void start();
  // The loop; returns the exit status when SIGTERM or SIGINT arrives on `signal_fd`
  // (a signalfd for SIGTERM, SIGINT and SIGHUP, blocked in every thread).
  int run(int signal_fd);

 private:
  void watch();
  void apply(View view);
  void health_pass();
  void register_all(bool only_unregistered);
  void register_servers(const std::vector<ResourceServer*>& list);
  void stop_all();
  void reload(const char* why);
  void on_kubelet_dir_event(uint32_t mask, const std::string& name);
  bool config_changed();
  bool vf_counts_changed() const;
  bool healthy() const;

  PluginOptions opt_;
  topology::Sysfs sysfs_;
  Metrics metrics_;
  std::unique_ptr<MetricsServer> metrics_server_;
  View view_;
  std::string config_text_;  // what the config file held when last loaded
  std::unique_ptr<HealthChecker> checker_;
  std::optional<RailFindingsFile> findings_;
  // sysfs's verdict, then the validation's failed rails on top.
  HealthByPool check_health();
  std::map<std::string, std::unique_ptr<ResourceServer>> servers_;
  std::map<std::string, bool> registered_;
  // The kubelet.sock each resource registered with (inode and change time: a file system may
  // give a new socket the old one's inode): a kubelet.sock created after the registration is a
  // new kubelet; the one it registered with already has it.
  struct SocketId {
    ino_t ino = 0;
    int64_t ctime_ns = 0;
    bool operator==(const SocketId&) const = default;
  };
  static SocketId socket_id(const struct ::stat& st);
  std::map<std::string, SocketId> registered_with_;
  // Set by kubelet-directory events, done once after the whole batch of them: a kubelet restart
  // shows as our sockets deleted and kubelet.sock created, often in one batch, and registering
  // for each event would register a resource twice with the same kubelet.
  bool register_pending_ = false;
  std::map<std::string, std::map<std::string, DeviceHealth>> health_;
  std::atomic<int64_t> last_tick_ms_{0};
  std::atomic<int> poll_ms_{500};
  int ino_ = -1, kubelet_wd_ = -1, config_wd_ = -1;  // inotify: kubelet dir, config dir
  std::string config_name_;
};

}  // namespace railyard::deviceplugin
