#include "test/support/cni_rig.h"

#include <filesystem>
#include <fstream>

#include "test/fixturegen/fixture.h"
#include "topology/discover/discover.h"

namespace railyard::testing {

using nlohmann::json;

CniRig::CniRig(int rails, bool macvlan_vf) {
  json hbs = json::array();
  for (int k = 0; k < rails; ++k) {
    char id[16];
    std::snprintf(id, sizeof id, "0000:%02x", 0x10 + k * 0x10);
    hbs.push_back({{"id", id},
                   {"numa", k < rails / 2 ? 0 : 1},
                   {"ports",
                    {{{"switch",
                       {{{"gpu", json::object()}},
                        {{"nic",
                          {{"rdma", "mlx5_" + std::to_string(k)},
                           {"netdev", "rypf" + std::to_string(k)},
                           {"vfs", 1},
                           {"vf_netdevs", {"ryvf" + std::to_string(k)}}}}}}}}}}});
  }
  fixture::generate(json{{"host_bridges", hbs}}, dir.path() / "root");
  std::ofstream(dir.path() / "rails.json") << "{}\n";
  std::filesystem::create_directories(log_dir());
  write_policy(json::object());
  const topology::Node topo =
      topology::discover(topology::Sysfs(dir.path() / "root"), topology::RailsConfig{});
  for (int k = 0; k < rails; ++k)
    vf_pci.push_back(topo.nics[static_cast<size_t>(topo.rails[static_cast<size_t>(k)])]
                         .vfs.at(0)
                         .pci.address.to_string());

  sh("ip netns exec " + node.name() + " sysctl -qw net.ipv6.conf.all.disable_ipv6=1");
  for (int k = 0; k < rails; ++k) {
    const std::string n = std::to_string(k);
    auto peer = std::make_unique<TestNetns>("peer" + n);
    sh("ip netns exec " + peer->name() + " sysctl -qw net.ipv6.conf.all.disable_ipv6=1");
    node.ip("link add rypf" + n + " type veth peer name rypfx" + n);
    node.ip("link set rypf" + n + " up");
    if (k == 0 && macvlan_vf) {
      // The VF stand-in is a macvlan on the PF; its traffic leaves through rypf0 -> peer.
      node.ip("link set rypfx0 netns " + peer->name());
      peer->ip("link set rypfx0 name eth0");
      peer->ip("link set eth0 up");
      node.ip("link add ryvf0 link rypf0 type macvlan mode bridge");
    } else {
      veth(node, "ryvf" + n, *peer, "eth0");
    }
    peer->ip("addr add 10.10." + n + ".1/24 dev eth0");
    peer->ip("addr add 10.99.0.1/32 dev lo");
    peers.push_back(std::move(peer));
  }
}

json CniRig::config(int k, const std::string& version) const {
  json rails = json::object();
  for (size_t r = 0; r < peers.size(); ++r) {
    const std::string n = std::to_string(r);
    rails[n] = {{"type", "host-local"},
                {"dataDir", ipam_dir()},
                {"ranges",
                 {{{{"subnet", "10.10." + n + ".0/24"},
                    {"rangeStart", "10.10." + n + ".2"},
                    {"rangeEnd", "10.10." + n + ".20"},
                    {"gateway", "10.10." + n + ".1"}}}}}};
  }
  return {{"cniVersion", version},
          {"name", "rails"},
          {"type", "railyard-cni"},
          {"deviceID", vf_pci.at(static_cast<size_t>(k))},
          {"rails", rails}};
}

void CniRig::write_policy(json extra) const {
  json p = {{"stateDir", state_dir()}, {"draDir", dra_dir()}, {"logDir", log_dir()}};
  p.update(extra);
  std::ofstream(policy_file()) << p.dump() << "\n";
}

RunResult CniRig::cni(const std::string& command, const TestNetns& pod, const std::string& ifname,
                      const json& config, const std::string& container,
                      const std::string& cni_path) const {
  return cni_at(command, pod.path(), ifname, config, container, cni_path);
}

RunResult CniRig::cni_at(const std::string& command, const std::string& netns_path,
                         const std::string& ifname, const json& config,
                         const std::string& container, const std::string& cni_path,
                         const std::map<std::string, std::string>& extra_env) const {
  std::map<std::string, std::string> env = {
      {"CNI_COMMAND", command},
      {"CNI_CONTAINERID", container},
      {"CNI_NETNS", netns_path},
      {"CNI_IFNAME", ifname},
      {"CNI_PATH", cni_path},
      {"RAILYARD_SYSFS_ROOT", (dir.path() / "root").string()},
      {"RAILYARD_RAILS_FILE", (dir.path() / "rails.json").string()},
      {"RAILYARD_CNI_POLICY", policy_file()}};
  env.insert(extra_env.begin(), extra_env.end());
  return run({"ip", "netns", "exec", node.name(), RAILYARD_BIN_DIR "/railyard-cni"}, env,
             config.dump());
}

json CniRig::link_detail(const TestNetns& ns, const std::string& name) {
  const json links = json::parse(ns.ip("-d -j link show dev " + name));
  return links.at(0);
}

std::string CniRig::node_links() const {
  auto links = json::parse(node.ip("-j link show"));
  std::vector<std::string> lines;
  for (const auto& l : links)
    lines.push_back(l["ifname"].get<std::string>() + " mtu " + std::to_string(l["mtu"].get<int>()) +
                    " " + l.value("address", "") + " " + l.value("operstate", ""));
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string CniRig::snapshot(const TestNetns& ns) {
  return ns.ip("-o link show") + ns.ip("-o addr show") + ns.ip("rule") +
         ns.ip("route show table all");
}

}  // namespace railyard::testing
