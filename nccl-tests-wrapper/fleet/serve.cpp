#include "nccl-tests-wrapper/fleet/serve.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include "common/k8s_names.h"
#include "common/log_escape.h"
#include "nccl-tests-wrapper/checks/firmware.h"
#include "nccl-tests-wrapper/fleet/control.h"
#include "nccl-tests-wrapper/fleet/messages.h"
#include "nccl-tests-wrapper/fleet/pair.h"
#include "nccl-tests-wrapper/fleet/probe.h"
#include "nccl-tests-wrapper/fleet/ring.h"
#include "nccl-tests-wrapper/fleet/schedule.h"
#include "rdma/run/launch.h"
#include "rdma/transport/admission.h"
#include "topology/discover/discover.h"
#include "topology/model/rails.h"
namespace railyard::validate {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// This node's rail firmware, for rank 0's firmware comparison; none where the node's sysfs or
// rails file cannot be read (a pod without the host's sysfs): the fleet runs without it.
std::vector<std::string> node_firmware(const topology::Sysfs& sysfs) {
  try {
    return rail_firmware(topology::discover(sysfs, topology::load_node_rails()));
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

void serve(const FleetSettings& s, const rdma::Launch& launch, const FleetRails& rails,
           const topology::Sysfs& sysfs) {
  const auto timeout = std::chrono::seconds(s.bench.timeout_s);
  const rdma::Endpoint rv = rdma::Endpoint::parse(launch.rendezvous);
  const std::string coordinator = "rank 0 (rendezvous " + rv.to_string() + ")";
  rdma::Socket c = rdma::Socket::connect_to(rv, "", timeout, coordinator);
  rdma::prove_as_connector(c, rails.key, "fleet", coordinator, Clock::now() + timeout);
  // Each rail NIC's MAC: an ARP probe's answer names the NIC by it (probe.h).
  std::vector<std::string> macs;
  for (const auto& a : rails.addresses) macs.push_back(mac_address(rdma::netdev_holding(a).name));
  send_message(c,
               {{"rank", launch.rank},
                {"world", launch.world},
                {"node", s.node_name},
                {"rails", rails.addresses},
                {"macs", macs},
                {"firmware", node_firmware(sysfs)}},
               coordinator);
  std::vector<rdma::Socket> listeners;
  // Rank 0 may keep a rank idle while other pairs of a long fleet run.
  const auto idle = std::chrono::hours(24);
  for (;;) {
    const json m = recv_message(c, coordinator, idle);
    const std::string op =
        m.is_object() && m.contains("op") && m["op"].is_string() ? m["op"].get<std::string>() : "";
    if (op == "done") return;
    json reply;
    try {
      if (op == "listen") {
        listeners.clear();
        json ports = json::array();
        for (const auto& a : rails.addresses) {
          listeners.push_back(rdma::Socket::listen_on(a, 0));
          ports.push_back(listeners.back().local_port());
        }
        reply = {{"ports", ports}};
      } else if (op == "pair") {
        const PairOrder order = parse_pair(m, rails.addresses.size(), coordinator);
        const auto out = test_pair(s.bench, rails, sysfs, order.role, std::move(listeners),
                                   order.peer, order.name);
        listeners.clear();
        json bw = json::array(), errors = json::array();
        for (const auto& r : out) {
          bw.push_back(r.busbw ? json(*r.busbw) : json(nullptr));
          errors.push_back(r.error);
        }
        reply = {{"busbw", bw}, {"errors", errors}};
      } else if (op == "ring") {
        const RingOrder order = parse_ring(m, rails.addresses.size(), coordinator);
        const auto out = test_ring(s.bench, rails, sysfs, order.index, std::move(listeners),
                                   order.table, order.names);
        listeners.clear();
        json bw = json::array();
        for (const auto& b : out.busbw) bw.push_back(b ? json(*b) : json(nullptr));
        reply = {{"busbw", bw}, {"error", out.error}};
      } else if (op == "probe") {
        const ProbeOrder order = parse_probe(m, rails.addresses.size(), coordinator);
        const std::string& source = rails.addresses[order.rail];
        const auto heard = arp_probe(rdma::netdev_holding(source).name, source, order.targets,
                                     std::chrono::milliseconds(order.wait_ms));
        reply = {{"heard", heard}};
      } else {
        reply = {{"error", "unknown operation '" + escape_controls(op) + "'"}};
      }
    } catch (const std::exception& e) {
      reply = {{"error", e.what()}};
    }
    send_message(c, reply, coordinator);
  }
}

}  // namespace railyard::validate
