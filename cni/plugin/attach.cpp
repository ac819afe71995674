#include "cni/plugin/attach.h"

#include <fcntl.h>
#include <netlink/errno.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <functional>

#include "cni-protocol/error.h"
#include "cni-protocol/netns.h"
#include "cni/plugin/config.h"
#include "cni/plugin/device.h"
#include "cni/plugin/failpoint.h"
#include "cni/plugin/ipam.h"
#include "cni/plugin/rdma_netns.h"
#include "cni/plugin/state.h"
#include "cni/plugin/vf.h"
#include "common/fd.h"
#include "dra/handoff/handoff.h"
#include "net/link.h"
#include "net/netns.h"
#include "sbr/routing.h"
#include "topology/discover/discover.h"

namespace railyard::cni {
namespace {

using net::add_address;
using net::change_link;
using net::find_link;
using net::flush_addresses;
using net::has_address;
using net::LinkChange;
using net::write_sysctl;
using nlohmann::json;

// Steps to take back, newest first, each on its own: one failing does not stop the others.
class Undo {
 public:
  void push(std::string what, std::function<void()> fn) {
    steps_.emplace_back(std::move(what), std::move(fn));
  }
  void run() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      try {
        it->second();
      } catch (const std::exception& e) {
        spdlog::error("rollback: {} failed: {}", it->first, e.what());
      }
    }
    steps_.clear();
  }

 private:
  std::vector<std::pair<std::string, std::function<void()>>> steps_;
};

// A namespace file held open (common/fd.h), or the CNI error that it could not be opened.
Fd open_ns(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw CniError(kIoFailure, "cannot open " + path);
  return Fd(fd);
}

// Netlink failures caused by the request (a name that exists, an MTU the device refuses) are
// configuration errors; others are internal.
[[noreturn]] void rethrow_netlink(const net::NetlinkError& e) {
  const int n = e.nl_error();
  throw CniError(n == NLE_EXIST || n == NLE_INVAL || n == NLE_RANGE || n == NLE_OPNOTSUPP
                     ? kInvalidConfig
                     : kInternal,
                 e.what());
}

template <class F>
auto netlink_step(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const net::NetlinkError& e) {
    rethrow_netlink(e);
  } catch (const sbr::SbrError& e) {
    throw CniError(kInvalidConfig, e.what());
  }
}

bool netns_usable(const std::string& path) {
  if (path.empty()) return false;
  try {
    net::check_netns_path(path);
    return true;
  } catch (const net::NetnsError&) {
    return false;
  }
}

// The network config the IPAM plugin gets: ours, with the chosen ipam section.
json ipam_netconf(const json& config, const json& ipam) {
  json c = config;
  c["ipam"] = ipam;
  c.erase("prevResult");
  return c;
}

sbr::Plan sbr_plan(const Result& r, const std::string& ifname, int table, int priority) {
  sbr::Plan p;
  p.ifname = ifname;
  p.table = table;
  p.priority = priority;
  for (const auto& ip : r.ips) {
    p.addresses.push_back(ip.address);
    if (ip.gateway) p.gateways.push_back(*ip.gateway);
  }
  for (const auto& rt : r.routes) {
    if (rt.dst.is_default() && rt.gw)
      p.gateways.push_back(*rt.gw);
    else
      p.routes.push_back(sbr::ExtraRoute{rt.dst, rt.gw});
  }
  return p;
}

// The device back in the host under its original name and settings: from the pod if it is
// there (under the pod name, or under its host name when ADD died before renaming), else
// wherever the kernel put it when the namespace went away.
void give_back(const AttachmentState& st) {
  const Fd host = open_ns("/proc/self/ns/net");
  bool done = false;
  auto restore_up = [&] {
    if (!st.original_up) return;
    net::RouteSocket sk;
    change_link(sk, st.host_name, {.up = true});
  };
  if (netns_usable(st.netns)) {
    net::in_netns(st.netns, [&] {
      net::RouteSocket sk;
      auto link = find_link(sk, st.ifname);
      if (!link) link = find_link(sk, st.host_name);
      if (!st.rdma_device.empty()) {
        try {
          move_rdma_device(st.rdma_device, host.get());
        } catch (const CniError& e) {
          spdlog::error("DEL {}/{}: {}", st.container_id, st.ifname, e.what());
        }
      }
      if (!link) return;
      if (st.table > 0 && st.result.is_object())
        sbr::remove(sbr_plan(parse_result(st.result), st.ifname, st.table, st.priority));
      flush_addresses(sk, link->index);
      change_link(sk, link->name, {.up = false});
      LinkChange back{.name = st.host_name, .mtu = st.original_mtu, .netns_fd = host.get()};
      if (!st.original_mac.empty() && st.original_mac != link->mac) back.mac = st.original_mac;
      change_link(sk, link->name, back);
      done = true;
    });
  }
  if (done) {
    restore_up();
    return;
  }
  net::RouteSocket sk;
  for (const std::string& name : {st.host_name, st.ifname}) {
    auto link = find_link(sk, name);
    if (!link) continue;
    // Under its own name: it never left. Under the pod's name: the kernel returned it when the
    // namespace died, but only a matching MAC proves that this host interface is that device.
    if (name == st.ifname) {
      std::string pod_mac;
      if (st.result.is_object() && st.result.contains("interfaces") &&
          !st.result["interfaces"].empty())
        pod_mac = st.result["interfaces"][0].value("mac", "");
      if (link->mac != pod_mac && link->mac != st.original_mac) continue;
    }
    change_link(sk, name, {.up = false});
    LinkChange back{
        .name = name == st.host_name ? std::nullopt : std::optional<std::string>(st.host_name),
        .mtu = st.original_mtu};
    if (!st.original_mac.empty() && st.original_mac != link->mac) back.mac = st.original_mac;
    change_link(sk, name, back);
    restore_up();
    return;
  }
  spdlog::info("DEL {}/{}: {} is gone with the pod's namespace", st.container_id, st.ifname,
               st.host_name);
}

// Everything an attachment holds, released; the state file removed last, and kept when the IPAM
// release failed so that a retried DEL can finish it. A record from an earlier boot holds only
// its lease: the namespace and the VF's settings died with that boot, and the device may now
// serve another pod, which must not get this record's names and settings.
void release(const AttachmentState& st, const Env& env, std::chrono::milliseconds ipam_limit) {
  const bool same_boot = st.boot_id.empty() || st.boot_id == current_boot_id();
  if (!same_boot)
    spdlog::info("DEL {}/{}: recorded in an earlier boot; releasing its lease only",
                 st.container_id, st.ifname);
  std::optional<CniError> ipam_error;
  if (!st.ipam.is_null()) {
    Env ipam_env = env;
    try {
      ipam_exec("DEL", ipam_env, st.ipam, ipam_limit);
    } catch (const CniError& e) {
      ipam_error = e;
      spdlog::error("DEL {}/{}: {}", st.container_id, st.ifname, e.what());
    }
  }
  if (same_boot) netlink_step([&] { give_back(st); });
  if (same_boot && st.vf_number >= 0 && st.vf_original.is_object() && !st.vf_original.empty()) {
    try {
      net::RouteSocket sk;
      restore_vf(sk, st.pf_netdev, st.vf_number, st.vf_original);
    } catch (const std::exception& e) {
      spdlog::error("DEL {}/{}: restoring VF {} of {}: {}", st.container_id, st.ifname,
                    st.vf_number, st.pf_netdev, e.what());
    }
  }
  if (ipam_error) throw *ipam_error;
}

// deviceFrom "dra": the pod's next NIC, rail by rail, among those its claims were prepared
// with that no attachment holds yet. Multus adds a pod's networks one after another, so two
// attachments of one pod never race for the same NIC.
std::string claimed_device(const NetConf& conf, const Env& env, const StateStore& store) {
  const auto uid = env.args.find("K8S_POD_UID");
  if (uid == env.args.end() || uid->second.empty())
    throw CniError(kInvalidConfig,
                   "deviceFrom \"dra\" needs the pod's UID in CNI_ARGS (K8S_POD_UID), as the "
                   "runtime and Multus pass it");
  std::vector<dra::ClaimedNic> nics;
  try {
    nics = dra::pod_nics(conf.dra_dir, uid->second);
  } catch (const std::exception& e) {
    throw CniError(kIoFailure, e.what());
  }
  if (nics.empty())
    throw CniError(kInvalidConfig, "pod " + uid->second + " has no railyard.io NIC prepared in " +
                                       conf.dra_dir +
                                       ": does it have a ResourceClaim for one, and does the node "
                                       "run railyard-dra-driver?");
  std::string holders;
  for (const auto& n : nics) {
    const auto h = store.holder(n.pci, "");
    if (!h) return n.pci;
    holders += (holders.empty() ? "" : ", ") + n.pci + " by container " + h->container_id + " as " +
               h->ifname;
  }
  throw CniError(kInvalidConfig, "every railyard.io NIC of pod " + uid->second + " (" +
                                     std::to_string(nics.size()) + ") is attached already (" +
                                     holders +
                                     "): the pod names more rail networks than its claims hold "
                                     "NICs, or another pod holds them");
}

void forget_network_data(const NetConf& conf, const AttachmentState& st) {
  if (!conf.device_from_dra || st.pci.empty()) return;
  try {
    dra::remove_network_data(conf.dra_dir, st.pci);
  } catch (const std::exception& e) {
    spdlog::warn("{}/{}: {}", st.container_id, st.ifname, e.what());
  }
}

// In the pod, the moved device: renamed to CNI_IFNAME, its MTU, MAC and ARP sysctls set, up.
// Returns its MAC.
std::string set_up_in_pod(const NetConf& conf, const Env& env, const std::string& netdev) {
  std::string mac;
  netlink_step([&] {
    net::in_netns(env.netns, [&] {
      net::RouteSocket sk;
      change_link(sk, netdev, {.name = env.ifname});
      failpoint("rename");
      if (conf.mtu) change_link(sk, env.ifname, {.mtu = *conf.mtu});
      failpoint("mtu");
      if (!conf.mac.empty()) change_link(sk, env.ifname, {.mac = conf.mac});
      failpoint("mac");
      if (conf.arp_sysctls) {
        const std::string base = "/proc/sys/net/ipv4/conf/" + env.ifname + "/";
        write_sysctl(base + "arp_ignore", "1");
        write_sysctl(base + "arp_announce", "2");
        write_sysctl(base + "rp_filter", "0");
      }
      failpoint("sysctls");
      change_link(sk, env.ifname, {.up = true});
      failpoint("up");
      mac = find_link(sk, env.ifname)->mac;
    });
  });
  return mac;
}

// In the pod: the result's addresses and routes on CNI_IFNAME, then its SBR table (the rail's,
// else a free one), recorded in the state before it exists so that a rollback or DEL finds it.
void address_and_route(const NetConf& conf, const Env& env, int rail, const Result& result,
                       AttachmentState& st, const StateStore& store) {
  netlink_step([&] {
    net::in_netns(env.netns, [&] {
      net::RouteSocket sk;
      const int ifindex = find_link(sk, env.ifname)->index;
      for (const auto& ip : result.ips) add_address(sk, ifindex, ip.address);
      for (const auto& rt : result.routes)
        net::add_route(sk, ifindex, {rt.dst, rt.gw, rt.mtu, rt.priority, rt.table});
      failpoint("addresses");
      if (conf.sbr && !result.ips.empty()) {
        st.table = rail >= 0 ? conf.table_base + rail : sbr::find_free_table(conf.table_base);
        st.priority = conf.priority_base + (rail >= 0 ? rail : st.table - conf.table_base);
        store.save(st, StateStore::Durability::kAtomic);
        sbr::apply(sbr_plan(result, env.ifname, st.table, st.priority));
        failpoint("sbr");
      }
    });
  });
}

}  // namespace

json cmd_add(const Request& req) {
  NetConf conf = NetConf::parse(req.config, req.policy);
  const Env& env = req.env;
  require_netns(env.netns);
  const StateStore store(conf.state_dir);
  if (conf.device_from_dra) conf.device_id = claimed_device(conf, env, store);
  const Device dev = resolve_device(conf);
  require_allowed(dev, req.policy);
  const json ipam = ipam_for(conf, dev);
  DeviceLock lock(conf.state_dir, dev.lock_key());
  if (store.load(env.container_id, env.ifname))
    throw CniError(kInvalidConfig, "container " + env.container_id +
                                       " already has an attachment named " + env.ifname);
  if (auto h = store.holder(dev.pci, dev.netdev))
    throw CniError(kInvalidConfig, "device " + (dev.pci.empty() ? dev.netdev : dev.pci) +
                                       " is attached to container " + h->container_id + " as " +
                                       h->ifname);
  if (!ipam.is_null() && find_ipam_plugin(ipam["type"], env.path).empty())
    throw CniError(kInvalidConfig,
                   "IPAM plugin '" + ipam["type"].get<std::string>() + "' not found in CNI_PATH");

  net::RouteSocket host_sk;
  const auto link = find_link(host_sk, dev.netdev);
  if (!link)
    throw CniError(kInvalidConfig,
                   "device " + (dev.pci.empty() ? "" : dev.pci + " ") + "(" + dev.netdev +
                       ") is not in the host network namespace: another pod holds it, or the "
                       "kernel has no interface of that name (sysfs names it, netlink does not)");
  const bool clash = net::in_netns(env.netns, [&] {
    net::RouteSocket sk;
    return find_link(sk, env.ifname).has_value();
  });
  if (clash) throw CniError(kInvalidConfig, "the pod already has an interface named " + env.ifname);

  AttachmentState st;
  st.boot_id = current_boot_id();
  st.container_id = env.container_id;
  st.ifname = env.ifname;
  st.netns = env.netns;
  st.pci = dev.pci;
  st.host_name = dev.netdev;
  st.original_mac = link->mac;
  st.original_mtu = link->mtu;
  st.original_up = link->up;
  st.rail = dev.rail;
  st.pf_netdev = dev.pf_netdev;
  st.vf_number = dev.vf_number;
  st.ipam = ipam.is_null() ? json()
                           : negotiate_ipam_version(env, ipam_netconf(req.config, ipam),
                                                    req.policy.ipam_timeout);
  // Before anything is touched, durably: a crash from here on is undone by DEL.
  store.save(st, StateStore::Durability::kDurable);

  Undo undo;
  try {
    if (conf.vf.any_besides_mac() && dev.vf_number < 0)
      throw CniError(kInvalidConfig, "VF settings given, but " + dev.netdev + " is not a VF");
    if (conf.vf.any() && dev.vf_number >= 0) {
      try {
        st.vf_original = apply_vf(host_sk, dev.pf_netdev, dev.vf_number, conf.vf);
        store.save(st, StateStore::Durability::kAtomic);
        undo.push("restore VF settings",
                  [&] { restore_vf(host_sk, dev.pf_netdev, dev.vf_number, st.vf_original); });
      } catch (const CniError& e) {
        // A MAC alone still reaches the pod interface below; anything else needs the PF.
        if (conf.vf.any_besides_mac()) throw;
        spdlog::warn("ADD {}/{}: {}; setting the MAC on the interface only", env.container_id,
                     env.ifname, e.what());
      }
    }
    failpoint("vf-settings");  // outside the try above, which takes a PF's refusal in stride
    const Fd pod = open_ns(env.netns);
    const Fd host = open_ns("/proc/self/ns/net");
    netlink_step([&] { change_link(host_sk, dev.netdev, {.up = false, .netns_fd = pod.get()}); });
    undo.push("return the device", [&] { give_back(st); });
    failpoint("move");
    if (!dev.rdma.empty() && rdma_netns_mode() == RdmaNetnsMode::kExclusive) {
      move_rdma_device(dev.rdma, pod.get());  // give_back() moves it home again
      st.rdma_device = dev.rdma;
      store.save(st, StateStore::Durability::kAtomic);
      failpoint("rdma");
    }

    const std::string mac = set_up_in_pod(conf, env, dev.netdev);

    Result result;
    Interface itf{env.ifname, mac, env.netns, conf.mtu, "", dev.pci};
    result.interfaces.push_back(itf);
    if (!ipam.is_null()) {
      const Result got = parse_result(ipam_exec("ADD", env, st.ipam, req.policy.ipam_timeout));
      undo.push("release the IPAM allocation",
                [&] { ipam_exec("DEL", env, st.ipam, req.policy.ipam_timeout); });
      failpoint("ipam");
      for (auto ip : got.ips) {
        ip.interface = 0;
        result.ips.push_back(ip);
      }
      result.routes = got.routes;
      result.dns = got.dns;
    }
    // Recorded before the routing exists: the rollback and DEL remove what the result and the
    // table name, also after a crash half-way through.
    st.result = to_json(result, "1.1.0");
    address_and_route(conf, env, dev.rail, result, st, store);
    st.complete = true;
    store.save(st, StateStore::Durability::kAtomic);
    failpoint("state");
    if (conf.device_from_dra) {
      // For the claim's status (networkData): where the NIC is now. Not worth failing ADD for.
      dra::NetworkData nd{env.args.at("K8S_POD_UID"), env.ifname, {}, mac};
      for (const auto& ip : result.ips) nd.ips.push_back(ip.address.to_string());
      try {
        dra::write_network_data(conf.dra_dir, dev.pci, nd);
      } catch (const std::exception& e) {
        spdlog::warn("ADD {}/{}: {}", env.container_id, env.ifname, e.what());
      }
    }
    spdlog::info("ADD {}/{}: {} ({}) rail {} -> {}", env.container_id, env.ifname, dev.netdev,
                 dev.pci, dev.rail, env.ifname);
    return to_json(result, req.version);
  } catch (...) {
    undo.run();
    store.remove(env.container_id, env.ifname);
    throw;
  }
}

void cmd_del(const Request& req) {
  const NetConf conf = NetConf::parse(req.config, req.policy);
  const StateStore store(conf.state_dir);
  auto st = store.load_or_set_aside(req.env.container_id, req.env.ifname);
  if (!st) {
    // No record (never added, already deleted, or the state was lost): the IP may still be held.
    json ipam = conf.ipam;
    try {
      if (!conf.device_from_dra) ipam = ipam_for(conf, resolve_device(conf));
    } catch (const CniError&) {
      // The device may be gone too; the network's own ipam is what is left to try.
    }
    if (!ipam.is_null() && !find_ipam_plugin(ipam.value("type", ""), req.env.path).empty())
      ipam_exec(
          "DEL", req.env,
          negotiate_ipam_version(req.env, ipam_netconf(req.config, ipam), req.policy.ipam_timeout),
          req.policy.ipam_timeout);
    return;
  }
  // The record names the device to lock, and is read again under the lock: a DEL that ran
  // meanwhile may have released the device, and another pod's ADD taken it, which a stale copy
  // of this record would undo.
  pause_point("del-before-lock");
  std::optional<DeviceLock> lock;
  for (;;) {
    const std::string key = st->lock_key();
    lock.emplace(conf.state_dir, key);
    st = store.load_or_set_aside(req.env.container_id, req.env.ifname);
    if (!st) {
      spdlog::info("DEL {}/{}: released meanwhile by another DEL", req.env.container_id,
                   req.env.ifname);
      return;
    }
    if (st->lock_key() == key) break;
    lock.reset();  // re-added on another device meanwhile: lock that one
  }
  release(*st, req.env, req.policy.ipam_timeout);
  forget_network_data(conf, *st);
  store.remove(st->container_id, st->ifname);
  spdlog::info("DEL {}/{}: {} returned to the host", st->container_id, st->ifname, st->host_name);
}

void cmd_check(const Request& req) {
  const NetConf conf = NetConf::parse(req.config, req.policy);
  const StateStore store(conf.state_dir);
  auto st = store.load(req.env.container_id, req.env.ifname);
  if (!st || !st->complete)
    throw CniError(kCheckFailed,
                   "no attachment " + req.env.ifname + " for container " + req.env.container_id);
  require_netns(req.env.netns);
  std::vector<std::string> diffs;
  const Result recorded = parse_result(st->result);
  const Result& expected = req.prev_result ? *req.prev_result : recorded;
  netlink_step([&] {
    net::in_netns(req.env.netns, [&] {
      net::RouteSocket sk;
      auto link = find_link(sk, req.env.ifname);
      if (!link) {
        diffs.push_back("interface " + req.env.ifname + " is missing");
        return;
      }
      if (!link->up) diffs.push_back(req.env.ifname + " is down");
      if (conf.mtu && link->mtu != *conf.mtu)
        diffs.push_back("MTU is " + std::to_string(link->mtu) + ", expected " +
                        std::to_string(*conf.mtu));
      for (const auto& ip : expected.ips)
        if (!has_address(sk, link->index, ip.address))
          diffs.push_back("address " + ip.address.to_string() + " is missing");
      if (st->table > 0)
        for (auto& d : sbr::check(sbr_plan(expected, req.env.ifname, st->table, st->priority)))
          diffs.push_back(d);
    });
  });
  if (diffs.empty()) return;
  std::string msg = req.env.ifname + " differs: ";
  for (size_t i = 0; i < diffs.size(); ++i) msg += (i ? "; " : "") + diffs[i];
  throw CniError(kCheckFailed, msg);
}

void cmd_status(const Request& req) {
  const NetConf conf = NetConf::parse(req.config, req.policy);
  std::vector<json> ipams;
  if (!conf.ipam.is_null()) ipams.push_back(conf.ipam);
  if (conf.rails.is_object())
    for (const auto& [k, v] : conf.rails.items()) ipams.push_back(v);
  for (const auto& ipam : ipams)
    if (find_ipam_plugin(ipam["type"], req.env.path).empty())
      throw CniError(kPluginNotAvailable,
                     "IPAM plugin '" + ipam["type"].get<std::string>() + "' not found in CNI_PATH");
  if (!conf.device.empty() || !conf.device_id.empty())
    resolve_device(conf);  // throws when it is not there
}

void cmd_gc(const Request& req) {
  const NetConf conf = NetConf::parse(req.config, req.policy);
  const StateStore store(conf.state_dir);
  const json valid = req.config.value("cni.dev/valid-attachments", json::array());
  if (!valid.is_array())
    throw CniError(kInvalidConfig, "'cni.dev/valid-attachments' must be a list");
  for (const auto& st : store.all()) {
    const bool keep = std::any_of(valid.begin(), valid.end(), [&](const json& a) {
      return a.is_object() && a.value("containerID", "") == st.container_id &&
             a.value("ifname", "") == st.ifname;
    });
    if (keep) continue;
    spdlog::info("GC {}/{}: not a valid attachment, releasing it", st.container_id, st.ifname);
    DeviceLock lock(conf.state_dir, st.lock_key());
    Env env = req.env;
    env.container_id = st.container_id;
    env.ifname = st.ifname;
    env.netns = st.netns;
    ::setenv("CNI_CONTAINERID", st.container_id.c_str(), 1);  // the IPAM plugin reads these
    ::setenv("CNI_IFNAME", st.ifname.c_str(), 1);
    ::setenv("CNI_NETNS", st.netns.c_str(), 1);
    release(st, env, req.policy.ipam_timeout);
    forget_network_data(conf, st);
    store.remove(st.container_id, st.ifname);
  }
}

}  // namespace railyard::cni
