#include "nccl-tests-wrapper/fleet/pair.h"

#include <algorithm>
#include <thread>

#include "rdma/bench/job.h"
#include "rdma/run/p2p.h"
#include "rdma/run/rails.h"

namespace railyard::validate {

FleetRails resolve_fleet_rails(const rdma::bench::Options& o, const topology::Sysfs& sysfs) {
  FleetRails r;
  r.key = rdma::ChannelKey::resolve(o.token_file);
  rdma::warn_if_unauthenticated(r.key, "railyard-validate fleet");
  r.entries = rdma::rail_entries(o.rails, std::getenv("NCCL_IB_HCA"));
  for (const auto& e : r.entries) r.addresses.push_back(rdma::resolve_rail(e, sysfs.root()));
  if (o.transport == "verbs") {
    int gid_index = o.gid_index;
    if (gid_index < 0)
      if (auto v = rdma::bench::env("NCCL_IB_GID_INDEX")) gid_index = std::stoi(*v);
    for (size_t k = 0; k < r.entries.size(); ++k)
      r.plans.push_back(rdma::plan_rail(sysfs, r.entries[k], r.addresses[k], gid_index));
  }
  return r;
}

namespace {

RailOutcome test_rail(const rdma::bench::Options& o, const FleetRails& rails,
                      const topology::Sysfs& sysfs, int role, size_t k, rdma::Socket listener,
                      const rdma::Endpoint& peer, const std::string& peer_name) {
  const std::chrono::milliseconds timeout = std::chrono::seconds(o.timeout_s);
  rdma::Table table(2);
  table[static_cast<size_t>(role)] = {{rails.addresses[k], listener.local_port()}};
  table[static_cast<size_t>(1 - role)] = {peer};
  std::vector<rdma::Socket> listeners;
  listeners.push_back(std::move(listener));
  // What may throw comes first: GCC 12 -O3 warns of a half-built Job otherwise.
  rdma::RingSockets ring =
      rdma::connect_ring(role, 2, {rails.addresses[k]}, listeners, table, timeout, rails.key,
                         o.transport == "tcp" ? o.streams : 1,
                         [&](int, size_t) { return peer_name + " on rail " + std::to_string(k); });
  std::vector<rdma::RailPlan> plans;
  if (!rails.plans.empty()) plans.push_back(rails.plans[k]);
  rdma::bench::Job job{rdma::Launch{role, 2, "", "fleet"},
                       {rails.entries[k]},
                       {rails.addresses[k]},
                       std::move(plans),
                       topology::Sysfs(sysfs.root()),
                       rdma::host_memory(o.hugepages),
                       std::move(ring),
                       timeout};
  const size_t bytes = rdma::bench::parse_size(o.max_bytes);
  rdma::LinkPair pair(role, rdma::bench::make_links(o, job), *job.memory, bytes);
  const rdma::P2pResult m = pair.measure(0, bytes, o.iters, o.warmup, o.check != 0);
  if (m.wrong) return {std::nullopt, std::to_string(m.wrong) + " bytes arrived wrong"};
  if (role != 0) return {};
  return {std::min(m.gbps_0to1, m.gbps_1to0), ""};
}

}  // namespace

std::vector<RailOutcome> test_pair(const rdma::bench::Options& o, const FleetRails& rails,
                                   const topology::Sysfs& sysfs, int role,
                                   std::vector<rdma::Socket> listeners,
                                   const std::vector<rdma::Endpoint>& peer,
                                   const std::string& peer_name) {
  const size_t n = rails.addresses.size();
  if (listeners.size() != n || peer.size() != n)
    throw std::invalid_argument("test_pair: one listener and one peer endpoint per rail");
  std::vector<RailOutcome> out(n);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < n; ++k)
    threads.emplace_back([&, k, l = std::move(listeners[k])]() mutable {
      try {
        out[k] = test_rail(o, rails, sysfs, role, k, std::move(l), peer[k], peer_name);
      } catch (const std::exception& e) {
        out[k] = {std::nullopt, e.what()};
      }
    });
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace railyard::validate
