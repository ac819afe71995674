#include "test/support/rail_rig.h"

namespace railyard::testing {

RailRig::RailRig(int n, RailLayout l) : layout(l) {
  const bool v6 = layout == RailLayout::kSubnetPerRailV6;
  // No stray IPv6 chatter (router solicitations, MLD) in the IPv4 packet counts.
  if (!v6) sh("ip netns exec " + pod.name() + " sysctl -qw net.ipv6.conf.all.disable_ipv6=1");
  for (int k = 0; k < n; ++k) {
    RigRail r;
    r.ifname = "net" + std::to_string(k + 1);
    r.peer = std::make_unique<TestNetns>("peer" + std::to_string(k));
    if (!v6) sh("ip netns exec " + r.peer->name() + " sysctl -qw net.ipv6.conf.all.disable_ipv6=1");
    veth(pod, r.ifname, *r.peer, "eth0");
    std::string peer_addr;
    switch (layout) {
      case RailLayout::kSubnetPerRailV4:
        r.address = *net::IpPrefix::parse("10.10." + std::to_string(k) + ".2/24");
        r.gateway = net::IpAddress::parse("10.10." + std::to_string(k) + ".1");
        peer_addr = "10.10." + std::to_string(k) + ".1/24";
        r.peer->ip("addr add 10.99.0.1/32 dev lo");
        break;
      case RailLayout::kOneSubnetV4:
        r.address = *net::IpPrefix::parse("10.20.0." + std::to_string(10 + k) + "/16");
        peer_addr = "10.20.0.1/16";
        r.peer->ip("addr add 10.99.0.1/32 dev lo");
        break;
      case RailLayout::kSubnetPerRailV6:
        r.address = *net::IpPrefix::parse("fd00:0:0:" + std::to_string(k) + "::2/64");
        r.gateway = net::IpAddress::parse("fd00:0:0:" + std::to_string(k) + "::1");
        peer_addr = "fd00:0:0:" + std::to_string(k) + "::1/64";
        r.peer->ip("addr add fd99::1/128 dev lo");
        break;
    }
    r.peer->ip("addr add " + peer_addr + " dev eth0 nodad");
    // What IPAM and the CNI plugin did before source-based routing runs.
    pod.ip("addr add " + r.address.to_string() + " dev " + r.ifname + " nodad");
    rails.push_back(std::move(r));
  }
}

nlohmann::json RailRig::prev_result(int k, const std::string& version) const {
  const RigRail& r = rails.at(static_cast<size_t>(k));
  nlohmann::json ip = {{"address", r.address.to_string()}, {"interface", 0}};
  if (version.rfind("0.", 0) == 0) ip["version"] = r.address.address.is_v4() ? "4" : "6";
  if (r.gateway) ip["gateway"] = r.gateway->to_string();
  return {{"cniVersion", version},
          {"interfaces", {{{"name", r.ifname}, {"sandbox", pod.path()}}}},
          {"ips", {ip}},
          {"dns", nlohmann::json::object()}};
}

net::IpAddress RailRig::target() const {
  switch (layout) {
    case RailLayout::kSubnetPerRailV4:
      return *net::IpAddress::parse("10.99.0.1");
    case RailLayout::kOneSubnetV4:
      return *net::IpAddress::parse("10.20.0.1");
    case RailLayout::kSubnetPerRailV6:
      return *net::IpAddress::parse("fd99::1");
  }
  return {};
}

int RailRig::which_peer_receives_from(int k, std::optional<net::IpAddress> to) const {
  std::vector<const TestNetns*> peers;
  for (const auto& r : rails) peers.push_back(r.peer.get());
  return which_peer_receives(pod, rails.at(static_cast<size_t>(k)).address.address, peers,
                             to.value_or(target()), 40000 + k);
}

std::vector<long> RailRig::peer_rx_packets() const {
  std::vector<long> out;
  for (const auto& r : rails) {
    auto j = nlohmann::json::parse(r.peer->ip("-j -s link show dev eth0"));
    out.push_back(j.at(0).at("stats64").at("rx").at("packets").get<long>());
  }
  return out;
}

RunResult run_plugin(const std::string& binary, const std::string& command,
                     const std::string& netns, const std::string& ifname,
                     const nlohmann::json& config, const std::string& container_id) {
  return run({binary},
             {{"CNI_COMMAND", command},
              {"CNI_CONTAINERID", container_id},
              {"CNI_NETNS", netns},
              {"CNI_IFNAME", ifname},
              {"CNI_PATH", "/usr/lib/cni"}},
             config.dump());
}

}  // namespace railyard::testing
