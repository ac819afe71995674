// A simulated GPU node for railyard-cni: a "node" namespace where the plugin runs (its host),
// holding veth ends that stand in for VFs ("ryvf<k>") and PF netdevs ("rypf<k>") that exist but
// report no VFs over netlink, as some drivers do; a sysfs fixture that maps each VF's PCI address
// to its ryvf<k>; a pod namespace; and per rail a peer namespace at the VF's other end (the leaf
// switch), owning 10.10.<k>.1/24 and 10.99.0.1.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/support/netns.h"
#include "test/support/run.h"
#include "test/support/temp_dir.h"

namespace railyard::testing {

class CniRig {
 public:
  // `macvlan_vf`: rail 0's VF is a macvlan on rypf0 (so an MTU above the parent's is refused).
  explicit CniRig(int rails, bool macvlan_vf = false);

  TempDir dir;  // sysfs fixture, rails file, node policy, state, logs, host-local data
  TestNetns node{"node"};
  std::vector<std::unique_ptr<TestNetns>> peers;
  std::vector<std::string> vf_pci;  // rail k's VF PCI address

  std::string state_dir() const { return (dir.path() / "state").string(); }
  std::string ipam_dir() const { return (dir.path() / "ipam").string(); }
  std::string dra_dir() const { return (dir.path() / "dra").string(); }
  std::string log_dir() const { return (dir.path() / "log").string(); }
  // The node policy the plugin runs under (RAILYARD_CNI_POLICY): the rig's state, DRA and log
  // directories, with `extra`'s keys over them.
  std::string policy_file() const { return (dir.path() / "cni-policy.json").string(); }
  void write_policy(nlohmann::json extra) const;
  // The NAD-like config for rail k, Multus-style (deviceID of the VF), host-local IPAM per rail
  // from one `rails` map.
  nlohmann::json config(int k, const std::string& version = "1.0.0") const;
  // Runs railyard-cni in the node namespace as a runtime would.
  RunResult cni(const std::string& command, const TestNetns& pod, const std::string& ifname,
                const nlohmann::json& config, const std::string& container = "ctr1",
                const std::string& cni_path = "/usr/lib/cni") const;
  // The same with a namespace path that may no longer exist, and extra environment.
  RunResult cni_at(const std::string& command, const std::string& netns_path,
                   const std::string& ifname, const nlohmann::json& config,
                   const std::string& container = "ctr1",
                   const std::string& cni_path = "/usr/lib/cni",
                   const std::map<std::string, std::string>& extra_env = {}) const;
  // Links of the node namespace: "name mtu mac state" per line, sorted.
  std::string node_links() const;
  // `ip -d -j link show dev NAME` in a namespace: everything the kernel reports of one link
  // (name, flags incl. LOWER_UP = carrier, operstate, MTU, MAC, ifindex, queues, link kind).
  static nlohmann::json link_detail(const TestNetns& ns, const std::string& name);
  // Everything in a namespace that a plugin could leave behind.
  static std::string snapshot(const TestNetns& ns);
};

}  // namespace railyard::testing
