#include "dra/driver.h"

#include <poll.h>
#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "common/log_escape.h"
#include "dra/publisher/network_status.h"
#include "dra/publisher/node_events.h"
#include "dra/publisher/publisher.h"
#include "dra/slices/health.h"
#include "dra/slices/validate.h"
#include "topology/discover/discover.h"

namespace railyard::dra {
namespace topo = railyard::topology;
using json = nlohmann::json;

namespace {

topo::RailsConfig load_rails(const Source& src) {
  return topo::load_node_rails(src.rails_flag);
}

topo::Node read_node(const topo::Sysfs& sysfs, const topo::RailsConfig& rails) {
  // VF ports as the device plugin reads them, so that both judge a VF's health alike.
  return topo::discover(sysfs, rails, {.vf_ports = true});
}

// The claims' networkData, sent when it changed.
struct NetworkReports {
  std::map<std::string, std::string> sent;    // claim UID -> the entries last sent
  std::map<std::string, std::string> failed;  // claim UID -> the last error, logged once
};

void report_network(kube::ApiClient& api, const std::vector<dra::PreparedClaim>& claims,
                    const std::filesystem::path& dir, const std::string& pool,
                    NetworkReports& reports) {
  NetworkReports now;
  for (const auto& c : claims) {
    const json entries = dra::network_entries(c, dir, pool);
    const std::string key = entries.dump();
    const auto it = reports.sent.find(c.uid);
    if ((it == reports.sent.end() && entries.empty()) ||
        (it != reports.sent.end() && it->second == key)) {
      if (it != reports.sent.end()) now.sent[c.uid] = key;
      continue;
    }
    try {
      dra::put_device_status(api, c, entries);
      spdlog::info("claim {}: networkData of {} devices in its status", c.ref(), entries.size());
      now.sent[c.uid] = key;
    } catch (const std::exception& e) {
      // Tried again on the next tick; said once until the error changes.
      if (reports.failed[c.uid] != e.what())
        spdlog::warn("claim {}: networkData not sent: {}", c.ref(), e.what());
      now.failed[c.uid] = e.what();
      if (it != reports.sent.end()) now.sent[c.uid] = it->second;
    }
  }
  reports = std::move(now);
}

// The devices unhealthy at the last look: name -> (reason, since when).
struct Unwell {
  std::string reason, since;
};

// Logs what changed in the devices' health since the last look, and stamps each unhealthy
// device with when it was first seen so (its taint's timeAdded stays put while it lasts).
void follow_health(std::vector<dra::Device>& devices, std::map<std::string, Unwell>& unhealthy) {
  std::map<std::string, Unwell> now;
  for (auto& d : devices) {
    if (d.healthy) continue;
    const std::string reason = d.reason.empty() ? "unhealthy" : d.reason;
    const auto it = unhealthy.find(d.name);
    if (it == unhealthy.end() || it->second.reason != reason)
      spdlog::warn("device {} unhealthy: {}", d.name, reason);
    d.unhealthy_since = it == unhealthy.end() ? kube::rfc3339_now() : it->second.since;
    now[d.name] = {reason, d.unhealthy_since};
  }
  for (const auto& [name, was] : unhealthy)
    if (!now.count(name)) spdlog::info("device {} healthy again", name);
  unhealthy = std::move(now);
}

std::string describe(const dra::SliceOptions& o) {
  switch (o.unhealthy) {
    case dra::Unhealthy::kTaint:
      return "tainted railyard.io/rail-down, effect " + std::string(dra::to_string(o.effect));
    case dra::Unhealthy::kMark:
      return "published with railyard.io/healthy false";
    case dra::Unhealthy::kDrop:
      return "left out of the slices";
  }
  return "?";
}

}  // namespace

int run_slices(const Source& src, const dra::SliceOptions& options) {
  const topo::Sysfs sysfs(topo::sysfs_root_from(src.sysfs_flag));
  topo::Node node;
  try {
    node = read_node(sysfs, load_rails(src));
  } catch (const std::exception& e) {
    std::cerr << "railyard-dra-driver slices: " << e.what() << "\n";
    return 2;
  }
  for (const auto& d : node.diagnostics.all()) std::cerr << d.to_string() << "\n";
  // A v1 List: what `kubectl apply -f` and `kubectl create -f` take as it is.
  json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}};
  for (auto& s : dra::node_slices(node, dra::check_health(sysfs, node), options))
    list["items"].push_back(std::move(s));
  std::cout << list.dump(2) << "\n";
  return node.diagnostics.has_errors() ? 1 : 0;
}

int run_publish(const Source& src, dra::SliceOptions options, const PublishOptions& po) {
  topo::RailsConfig rails;
  kube::ApiConfig api_config;
  try {
    rails = load_rails(src);
    api_config = kube::in_cluster_config(po.api);
    api_config.user_agent = "railyard-dra-driver";
  } catch (const std::exception& e) {
    spdlog::error("cannot start: {}", e.what());
    return 2;
  }
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  const int sfd = signalfd(-1, &set, SFD_CLOEXEC);

  const topo::Sysfs sysfs(topo::sysfs_root_from(src.sysfs_flag));
  kube::ApiClient api(api_config);
  dra::Publisher pub(api, options.node_name);
  // The kubelet plugin reads claims on gRPC's threads: a client of its own.
  std::unique_ptr<dra::KubeletPlugin> plugin;
  std::mutex claims_api_mu;
  kube::ApiClient claims_api(api_config);
  if (po.kubelet_plugin) {
    dra::PluginOptions plugin_options = po.plugin;
    plugin_options.prepare.pool = options.node_name;
    plugin_options.prepare.root = sysfs.root();
    plugin = std::make_unique<dra::KubeletPlugin>(
        plugin_options, [&](const std::string& ns, const std::string& name) {
          std::lock_guard lk(claims_api_mu);
          return claims_api.call(
              "GET", "/apis/resource.k8s.io/v1/namespaces/" + ns + "/resourceclaims/" + name);
        });
    spdlog::info("{} prepared claims in {}", plugin->load_state(),
                 (plugin_options.state_dir / "claims").string());
  }
  NetworkReports network_reports;
  spdlog::info("node {}: publishing to {} every {} ms (sysfs {}); unhealthy devices: {}",
               options.node_name, api_config.server, po.interval_ms, sysfs.root().string(),
               describe(options));
  std::string published;  // the pool as last published, generation aside
  std::string last_error, last_diagnostics;
  std::map<std::string, Unwell> unhealthy;
  // Events on the Node name what the scheduler's "cannot allocate all claims" does not.
  dra::NodeEvents events(api, options.node_name, describe(options));
  auto last_sync = std::chrono::steady_clock::now();
  // After an error the next try waits longer, up to a minute, or what the API server asked.
  kube::Backoff backoff(std::chrono::milliseconds(po.interval_ms), std::chrono::minutes(1));
  int rc = 0;
  for (;;) {
    auto wait = std::chrono::milliseconds(po.interval_ms);
    try {
      if (!pub.connected()) {
        pub.connect();
        spdlog::info("API server {}: Node {} found; the pool's generation is {}", api_config.server,
                     options.node_name, pub.last_generation());
      }
      const topo::Node node = read_node(sysfs, rails);
      std::string diagnostics;
      for (const auto& d : node.diagnostics.all()) diagnostics += d.to_string() + "\n";
      if (diagnostics != last_diagnostics && !diagnostics.empty())
        spdlog::warn("sysfs: {}", diagnostics);
      last_diagnostics = diagnostics;
      auto devices = dra::build_devices(node, dra::check_health(sysfs, node));
      follow_health(devices, unhealthy);
      events.update(devices, pub.node_uid(), kube::rfc3339_now());
      if (plugin) plugin->update_node(std::make_shared<const topo::Node>(node), devices);
      dra::SliceOptions probe = options;
      probe.generation = 0;
      std::string content;
      for (const auto& s : dra::build_slices(devices, probe)) content += s.dump();
      // Now and then the pool on the API server is compared with what was sent: a slice deleted
      // or changed by someone else is published again.
      if (!published.empty() && po.resync_s > 0 &&
          std::chrono::steady_clock::now() - last_sync >= std::chrono::seconds(po.resync_s)) {
        last_sync = std::chrono::steady_clock::now();
        if (!pub.in_sync()) {
          spdlog::warn(
              "the pool's slices on the API server differ from those published: "
              "publishing again");
          published.clear();
        }
      }
      if (content != published) {
        options.generation = pub.last_generation() + 1;
        const auto slices = dra::build_slices(devices, options);
        size_t count = 0;
        for (const auto& s : slices) {
          count += s["spec"]["devices"].size();
          if (auto problems = dra::validate_slice(s); !problems.empty())
            throw std::runtime_error("slice " + s["metadata"].value("name", "") +
                                     " would be rejected: " + problems.front());
        }
        pub.publish(slices);
        spdlog::info("published generation {}: {} devices in {} slices ({} of {} unhealthy)",
                     options.generation, count, slices.size(), unhealthy.size(), devices.size());
        published = content;
        if (pub.taints_dropped() > 0) {
          // A tainted device stored without its taint looks healthy to the scheduler: leave the
          // unhealthy ones out instead, at once.
          spdlog::error(
              "the API server stored {} tainted devices without their taints (DRADeviceTaints "
              "off?): leaving unhealthy devices out of the slices from now on (--unhealthy drop)",
              pub.taints_dropped());
          options.unhealthy = dra::Unhealthy::kDrop;
          published.clear();
          wait = std::chrono::milliseconds(0);
        }
        last_sync = std::chrono::steady_clock::now();
      }
      // After publishing: a kubelet plugin that cannot start must not hold the slices back.
      if (plugin) {
        plugin->start();  // once; the node is known before the kubelet can ask
        report_network(api, plugin->claims(), po.plugin.state_dir, options.node_name,
                       network_reports);
      }
      last_error.clear();
      backoff.succeeded();
    } catch (const std::exception& e) {
      const auto* api_error = dynamic_cast<const kube::ApiError*>(&e);
      wait = backoff.after_failure(api_error ? api_error->retry_after_s() : std::nullopt);
      // Once per distinct error, so that an API server down for minutes is one line.
      if (e.what() != last_error)
        spdlog::error("{} (trying again in {} ms, longer while it lasts)", e.what(), wait.count());
      last_error = e.what();
      if (po.once) return 1;
    }
    if (po.once) break;
    pollfd p{sfd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(wait.count())) > 0) {
      signalfd_siginfo si{};
      if (read(sfd, &si, sizeof si) == sizeof si)
        spdlog::info("signal {}: stopping", strsignal(static_cast<int>(si.ssi_signo)));
      break;
    }
  }
  if (po.delete_on_exit && pub.connected()) {
    try {
      spdlog::info("deleted {} slices of the pool", pub.remove_all());
    } catch (const std::exception& e) {
      spdlog::error("deleting the pool's slices: {}", e.what());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace railyard::dra
