#include "deviceplugin/plugin.h"

#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "common/fd.h"
#include "deviceplugin/registration.h"
#include "topology/discover/discover.h"

namespace railyard::deviceplugin {
namespace {

namespace topo = railyard::topology;
using namespace std::chrono_literals;

// The kubelet answers Register in milliseconds; these bound how long a missing or wedged one
// holds the loop, and how soon an unregistered resource is tried again.
constexpr std::chrono::milliseconds kRegisterTimeout = 1s;
constexpr int64_t kRetryMs = 1000;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::optional<std::string> read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Netlink link events (carrier, VF netdevs coming and going) wake the loop for a health pass
// before the timer would.
class LinkEvents {
 public:
  LinkEvents() {
    sk_ = nl_socket_alloc();
    if (!sk_) return;
    nl_socket_disable_seq_check(sk_);
    nl_socket_modify_cb(
        sk_, NL_CB_VALID, NL_CB_CUSTOM, [](nl_msg*, void*) { return static_cast<int>(NL_OK); },
        nullptr);
    if (nl_connect(sk_, NETLINK_ROUTE) < 0 || nl_socket_add_membership(sk_, RTNLGRP_LINK) < 0 ||
        nl_socket_set_nonblocking(sk_) < 0) {
      spdlog::warn("no netlink link events; health relies on polling alone");
      nl_socket_free(sk_);
      sk_ = nullptr;
    }
  }
  ~LinkEvents() {
    if (sk_) nl_socket_free(sk_);
  }
  int fd() const { return sk_ ? nl_socket_get_fd(sk_) : -1; }
  void drain() {
    // Returns -NLE_AGAIN once empty; an overrun (-NLE_NOMEM) only means "something changed".
    for (int i = 0; i < 1024 && nl_recvmsgs_default(sk_) >= 0; ++i) {
    }
  }

 private:
  nl_sock* sk_ = nullptr;
};

}  // namespace

View load_view(const PluginOptions& options, const topo::Sysfs& sysfs) {
  std::shared_ptr<const Config> config;
  try {
    config = std::make_shared<const Config>(
        options.config_file.empty() ? Config::defaults() : Config::load(options.config_file));
  } catch (const ConfigError& e) {
    throw StartError(e.what());
  }
  return load_view(options, sysfs, std::move(config));
}

View load_view(const PluginOptions& options, const topo::Sysfs& sysfs,
               std::shared_ptr<const Config> config) {
  View v;
  v.config = std::move(config);
  try {
    // A file named by the flag or RAILYARD_RAILS_FILE must be there: falling back to every RDMA
    // device would number a storage NIC as a rail.
    const auto rails = topo::load_node_rails(options.rails_file);
    v.node = std::make_shared<const topo::Node>(topo::discover(sysfs, rails, {.vf_ports = true}));
    v.pools = build_pools(*v.config, *v.node, sysfs.root());
  } catch (const topo::RailsError& e) {
    throw StartError(e.what());
  } catch (const ConfigError& e) {
    throw StartError(e.what());
  }
  return v;
}

Plugin::Plugin(PluginOptions options)
    : opt_(std::move(options)), sysfs_(topo::sysfs_root_from(opt_.sysfs_root)) {}

Plugin::~Plugin() {
  stop_all();
  if (ino_ >= 0) ::close(ino_);
}

void Plugin::watch() {
  ino_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  std::error_code ec;
  std::filesystem::create_directories(opt_.kubelet_dir, ec);
  kubelet_wd_ = ::inotify_add_watch(ino_, opt_.kubelet_dir.c_str(),
                                    IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM);
  if (kubelet_wd_ < 0)
    throw StartError("cannot watch " + opt_.kubelet_dir.string() + ": " + std::strerror(errno));
  if (opt_.config_file.empty()) return;
  const std::filesystem::path cf(opt_.config_file);
  config_name_ = cf.filename().string();
  // The directory, not the file: editors and ConfigMaps replace the file (rename, ..data swap).
  const std::string dir = cf.parent_path().empty() ? "." : cf.parent_path().string();
  config_wd_ =
      ::inotify_add_watch(ino_, dir.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE);
}

void Plugin::start() {
  // Watches first: a kubelet restart or a config edit during start-up is not missed.
  watch();
  if (!opt_.config_file.empty()) config_text_ = read_text(opt_.config_file).value_or("");
  View v = load_view(opt_, sysfs_);
  for (const auto& d : v.node->diagnostics.all()) spdlog::warn("sysfs: {}", d.to_string());
  // Alive from here: a probe while the first registrations go out is answered 200, not 503.
  last_tick_ms_ = now_ms();
  if (!opt_.metrics_addr.empty()) {
    metrics_server_ = std::make_unique<MetricsServer>(metrics_, [this] { return healthy(); });
    try {
      metrics_server_->start(opt_.metrics_addr);
    } catch (const std::exception& e) {
      throw StartError(e.what());
    }
    spdlog::info("metrics and /healthz on port {}", metrics_server_->port());
  }
  try {
    apply(std::move(v));
  } catch (const std::runtime_error& e) {
    throw StartError(e.what());
  }
  last_tick_ms_ = now_ms();
}

void Plugin::apply(View v) {
  for (const auto& w : v.pools.warnings) spdlog::warn("{}", w);
  view_ = std::move(v);
  poll_ms_ = view_.config->health_poll_ms;
  checker_ = std::make_unique<HealthChecker>(sysfs_, *view_.node, view_.pools.pools);
  health_ = check_health();
  std::map<std::string, bool> wanted;
  std::vector<ResourceServer*> to_register;
  for (const auto& pool : view_.pools.pools) {
    wanted[pool.resource] = true;
    auto snap = std::make_shared<Snapshot>(
        Snapshot{view_.node, view_.config, pool, health_[pool.resource]});
    auto& slot = servers_[pool.resource];
    const bool fresh = !slot;
    if (fresh)
      slot = std::make_unique<ResourceServer>(pool.resource, opt_.kubelet_dir, opt_.devinfo_dir,
                                              metrics_);
    slot->update(std::move(snap));
    if (fresh) {
      slot->start();  // serve first, then register
      spdlog::info("serving {} ({} devices) on {}", pool.resource, pool.devices.size(),
                   slot->socket_path().string());
      to_register.push_back(slot.get());
    }
  }
  register_servers(to_register);
  for (auto it = servers_.begin(); it != servers_.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    spdlog::info("{} has no devices any more: no longer served", it->first);
    it->second->stop();
    registered_.erase(it->first);
    it = servers_.erase(it);
  }
  health_pass();
}

HealthByPool Plugin::check_health() {
  auto health = checker_->check();
  if (!opt_.findings_file.empty()) {
    if (!findings_) findings_.emplace(opt_.findings_file);
    mark_failed_rails(findings_->current(), view_.pools.pools, health);
  }
  return health;
}

void Plugin::health_pass() {
  const int64_t t0 = now_ms();
  auto fresh = check_health();
  spdlog::trace("health pass: {} ms", now_ms() - t0);
  Gauges g;
  for (const auto& pool : view_.pools.pools) {
    auto& now = fresh[pool.resource];
    auto& before = health_[pool.resource];
    bool changed = false;
    auto& counts = g.pools[pool.resource];
    for (const auto& [id, h] : now) {
      (h.healthy ? counts.healthy : counts.unhealthy)++;
      auto old = before.find(id);
      if (old != before.end() && old->second.healthy == h.healthy) continue;
      changed = true;
      if (h.healthy)
        spdlog::info("{} {}: Healthy again", pool.resource, id);
      else
        spdlog::warn("{} {}: Unhealthy: {}", pool.resource, id, h.reason);
    }
    counts.registered = registered_[pool.resource];
    if (changed)
      servers_.at(pool.resource)
          ->update(std::make_shared<Snapshot>(Snapshot{view_.node, view_.config, pool, now}));
  }
  for (const auto& [k, up] : checker_->rail_links())
    g.rails[k] = {view_.node->nics[static_cast<size_t>(view_.node->rails[static_cast<size_t>(k)])]
                      .pf.rdma_name(),
                  up};
  health_ = std::move(fresh);
  metrics_.set_gauges(std::move(g));
}

Plugin::SocketId Plugin::socket_id(const struct ::stat& st) {
  return {st.st_ino, int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec};
}

void Plugin::register_servers(const std::vector<ResourceServer*>& list) {
  if (list.empty()) return;
  const auto kubelet = opt_.kubelet_dir / kKubeletSocket;
  struct stat st {};
  if (::stat(kubelet.c_str(), &st) != 0) {
    for (auto* s : list) {
      registered_[s->resource()] = false;
      registered_with_.erase(s->resource());
      spdlog::info("{}: no kubelet yet at {}; registering when it appears", s->resource(),
                   kubelet.string());
    }
    return;
  }
  // All at once, each on its own channel: a kubelet that answers late holds the loop (and a
  // SIGTERM behind it) for one timeout, not one per resource.
  std::vector<std::future<std::string>> results;
  for (auto* s : list)
    results.push_back(std::async(std::launch::async, [&kubelet, s] {
      return register_resource(kubelet, s->socket_name(), s->resource(), kRegisterTimeout);
    }));
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string err = results[i].get();
    const std::string& resource = list[i]->resource();
    registered_[resource] = err.empty();
    if (err.empty())
      registered_with_[resource] = socket_id(st);
    else
      registered_with_.erase(resource);
    metrics_.count_registration(resource, err.empty());
    if (err.empty())
      spdlog::info("registered {} (endpoint {})", resource, list[i]->socket_name());
    else
      spdlog::error("{}", err);
  }
}

void Plugin::register_all(bool only_unregistered) {
  std::vector<ResourceServer*> list;
  for (auto& [name, s] : servers_)
    if (!only_unregistered || !registered_[name]) list.push_back(s.get());
  register_servers(list);
}

void Plugin::stop_all() {
  // Each server waits for its streams to end; in parallel, the slowest sets the exit time.
  std::vector<std::thread> stopping;
  for (auto& [name, s] : servers_) stopping.emplace_back([&s = *s] { s.stop(); });
  for (auto& t : stopping) t.join();
}

void Plugin::reload(const char* why) {
  spdlog::info("re-discovering: {}", why);
  try {
    std::shared_ptr<const Config> config = view_.config;
    if (!opt_.config_file.empty()) {
      config_text_ = read_text(opt_.config_file).value_or("");
      config = std::make_shared<const Config>(Config::parse(config_text_, opt_.config_file));
    }
    apply(load_view(opt_, sysfs_, config));
  } catch (const std::exception& e) {
    spdlog::error("re-discovery failed, keeping what is served: {}", e.what());
  }
}

bool Plugin::config_changed() {
  if (opt_.config_file.empty()) return false;
  const auto text = read_text(opt_.config_file);
  return text && *text != config_text_;
}

bool Plugin::vf_counts_changed() const {
  for (const auto& nic : view_.node->nics) {
    const auto now = read_text(
        sysfs_.sys("bus/pci/devices/" + nic.pf.pci.address.to_string() + "/sriov_numvfs"));
    if (!now) continue;
    try {
      if (std::stoi(*now) != static_cast<int>(nic.vfs.size())) return true;
    } catch (const std::exception&) {
    }
  }
  return false;
}

void Plugin::on_kubelet_dir_event(uint32_t mask, const std::string& name) {
  if (name == kKubeletSocket && (mask & (IN_CREATE | IN_MOVED_TO))) {
    spdlog::info("kubelet.sock (re)created: registering again");
    struct stat st {};
    const bool there = ::stat((opt_.kubelet_dir / kKubeletSocket).c_str(), &st) == 0;
    for (auto& [resource, s] : servers_) {
      const auto with = registered_with_.find(resource);
      if (!there || with == registered_with_.end() || !(with->second == socket_id(st)))
        registered_[resource] = false;
    }
    register_pending_ = true;
    return;
  }
  if (!(mask & (IN_DELETE | IN_MOVED_FROM))) return;
  for (auto& [resource, s] : servers_) {
    if (s->socket_name() != name) continue;
    struct stat st {};
    if (::stat(s->socket_path().c_str(), &st) == 0) return;  // already served again
    spdlog::warn("{} was removed (kubelet restart?): serving it again", s->socket_path().string());
    s->stop();
    s->start();
    registered_[resource] = false;
    registered_with_.erase(resource);
    register_pending_ = true;
    return;
  }
}

bool Plugin::healthy() const {
  // Called from the HTTP thread: only atomics here. A loop that stopped ticking is not healthy.
  return now_ms() - last_tick_ms_.load() <= 3 * int64_t{poll_ms_.load()} + 2000;
}

int Plugin::run(int signal_fd) {
  // This thread does the background work (health passes over hundreds of sysfs files,
  // re-discovery); gRPC's threads answer the kubelet. On a busy node the answers come first.
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10) != 0)
    spdlog::debug("cannot lower the main loop's priority: {}", std::strerror(errno));
  LinkEvents links;
  Fd timer(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  const int64_t period_ns = int64_t{view_.config->health_poll_ms} * 1'000'000;
  itimerspec its{};
  its.it_interval = {static_cast<time_t>(period_ns / 1'000'000'000),
                     static_cast<long>(period_ns % 1'000'000'000)};
  its.it_value = its.it_interval;
  ::timerfd_settime(timer.get(), 0, &its, nullptr);

  int64_t last_retry = now_ms();
  for (;;) {
    pollfd fds[4] = {{signal_fd, POLLIN, 0},
                     {ino_, POLLIN, 0},
                     {timer.get(), POLLIN, 0},
                     {links.fd(), POLLIN, 0}};
    if (::poll(fds, links.fd() >= 0 ? 4 : 3, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("poll: {}", std::strerror(errno));
      return 1;
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si{};
      if (::read(signal_fd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGHUP) {
          reload("SIGHUP");
        } else {
          spdlog::info("signal {}: stopping", static_cast<int>(si.ssi_signo));
          stop_all();
          return 0;
        }
      }
    }
    if (fds[1].revents & POLLIN) {
      alignas(inotify_event) char buf[8192];
      bool config_touched = false;
      ssize_t n;
      while ((n = ::read(ino_, buf, sizeof buf)) > 0) {
        for (char* p = buf; p < buf + n;) {
          auto* ev = reinterpret_cast<inotify_event*>(p);
          const std::string name = ev->len ? ev->name : "";
          if (ev->wd == kubelet_wd_) on_kubelet_dir_event(ev->mask, name);
          if (ev->wd == config_wd_ && (name == config_name_ || name == "..data"))
            config_touched = true;
          p += sizeof(inotify_event) + ev->len;
        }
      }
      if (register_pending_) {
        register_pending_ = false;
        register_all(true);
      }
      if (config_touched && config_changed()) reload("the config file changed");
    }
    bool pass = false;
    if (fds[2].revents & POLLIN) {
      uint64_t ticks;
      (void)!::read(timer.get(), &ticks, sizeof ticks);
      pass = true;
      if (vf_counts_changed()) reload("a PF's VF count changed");
      if (now_ms() - last_retry >= kRetryMs) {
        last_retry = now_ms();
        register_all(true);
      }
    }
    if (links.fd() >= 0 && (fds[3].revents & POLLIN)) {
      links.drain();
      pass = true;
    }
    if (pass) health_pass();
    last_tick_ms_ = now_ms();
  }
}

}  // namespace railyard::deviceplugin
