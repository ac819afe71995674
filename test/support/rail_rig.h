// A pod namespace with N rails: rail k is a veth pair between the pod ("net<k+1>") and a peer
// namespace of its own ("eth0"), standing in for a VF and its leaf switch. The peer owns the
// rail's gateway address and 10.99.0.1 / fd99::1, a "remote" address reachable only through it.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "net/ip.h"
#include "test/support/netns.h"
#include "test/support/run.h"

namespace railyard::testing {

enum class RailLayout {
  kSubnetPerRailV4,  // rail k: 10.10.k.2/24, gateway 10.10.k.1
  kOneSubnetV4,  // every rail in 10.20.0.0/16 (10.20.0.<10+k>), no gateway; every peer 10.20.0.1
                 // (and 10.99.0.1, answering ARP for it as Linux does by default)
  kSubnetPerRailV6,  // rail k: fd00:0:0:<k>::2/64, gateway fd00:0:0:<k>::1
};

struct RigRail {
  std::string ifname;
  net::IpPrefix address;
  std::optional<net::IpAddress> gateway;
  std::unique_ptr<TestNetns> peer;
};

class RailRig {
 public:
  RailRig(int rails, RailLayout layout);
  TestNetns pod{"pod"};
  std::vector<RigRail> rails;
  RailLayout layout;

  // The prevResult an IPAM plugin would have produced for rail k.
  nlohmann::json prev_result(int k, const std::string& version = "1.0.0") const;
  // The address the peers answer on: the remote one, or the shared one for kOneSubnetV4.
  net::IpAddress target() const;
  // Sends one datagram from rail k's address to `to` (default: target()); returns the index of
  // the peer that got it, -1 for none. Throws when the pod cannot send at all (no route).
  int which_peer_receives_from(int k, std::optional<net::IpAddress> to = std::nullopt) const;
  // Received packets counted on each peer's eth0.
  std::vector<long> peer_rx_packets() const;
};

// Runs a CNI plugin as a runtime does.
RunResult run_plugin(const std::string& binary, const std::string& command,
                     const std::string& netns, const std::string& ifname,
                     const nlohmann::json& config, const std::string& container_id = "ctr1");

}  // namespace railyard::testing
