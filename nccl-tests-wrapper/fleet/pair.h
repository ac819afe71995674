// railyard-validate fleet's unit of work: two ranks test every rail between them at once, as
// railyard-bench p2p does (the same links: TCP or verbs RC), each rail in its own thread so a
// silent rail costs one timeout, not one per rail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rdma/bench/options.h"
#include "rdma/transport/channel_auth.h"
#include "rdma/transport/socket.h"
#include "rdma/transport/verbs_choice.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::validate {

// This rank's rails, resolved once from --rails (or NCCL_IB_HCA).
struct FleetRails {
  std::vector<std::string> entries;    // as given: netdev, address or RDMA device
  std::vector<std::string> addresses;  // each rail's IPv4 address
  std::vector<rdma::RailPlan> plans;   // verbs only
  rdma::ChannelKey key;                // proved on the control channel and every rail connection
};
FleetRails resolve_fleet_rails(const rdma::bench::Options& o, const topology::Sysfs& sysfs);

struct RailOutcome {
  std::optional<double> busbw;  // GB/s, the slower direction; role 0 only
  std::string error;            // why the rail gave no number
};

// Both ranks call this at the same time. `listeners` (one per rail, taken) are where the peer
// connects; `peer` its listeners; `peer_name` how errors name it ("rank 3 (node-3)", then " on
// rail k"). Sizes, iterations, transport and timeout come from `o` (max_bytes is the message
// size).
std::vector<RailOutcome> test_pair(const rdma::bench::Options& o, const FleetRails& rails,
                                   const topology::Sysfs& sysfs, int role,
                                   std::vector<rdma::Socket> listeners,
                                   const std::vector<rdma::Endpoint>& peer,
                                   const std::string& peer_name);

}  // namespace railyard::validate
