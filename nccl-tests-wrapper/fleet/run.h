// railyard-validate fleet: one rank per node. Rank 0 coordinates over the rendezvous: every
// round of the round-robin schedule (or, with bisection, of the suspects' schedule) runs all its
// pairs at once, every rail of a pair at once;
// rounds holding a suspect are run again (noise on a busy machine passes, a fault stays); a NIC
// silent or slow with every peer is asked, over ARP, which leaf it hears; then the matrix is
// classified (classify.h). Every rank serves rank 0 until told to stop.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "nccl-tests-wrapper/fleet/report.h"
#include "rdma/bench/options.h"

namespace railyard::validate {

struct FleetSettings {
  rdma::bench::Options bench;  // launch, rails, transport, message size (max_bytes), -n, -w, -c,
                               // timeout (seconds: joining, connecting a rail, a silent peer)
  std::string node_name;       // how the report names this rank's node
  int repeat = 1;              // extra runs of each round that holds a suspect
  double slow_fraction = 0.7;  // of the fleet's median pair
  bool probe = true;           // ask suspect NICs which leaf they hear
  // "pairwise": every pair (N-1 rounds). "bisect": ring allreduces over halves, then halves of
  // the slower half, to corner stragglers in O(log N) runs; then pairs only for the suspects,
  // each against two nodes found good. It finds slow or silent NICs and nodes; a cable that is
  // bad for one pair only is seen only when that pair are ring neighbours.
  std::string mode = "pairwise";
};

// Rank 0 returns the report; the others return nullopt once rank 0 lets them go. Progress (one
// line per round) goes to `progress` on rank 0. When the fleet cannot run (bad settings, a rank
// that never joined), rank 0 returns a report whose `could_not_run` says why and whose
// `missing` names the ranks that never joined; the other ranks throw (rdma::NetError, or
// std::invalid_argument for bad settings), as does any rank whose launch cannot be resolved.
std::optional<FleetReport> run_fleet(const FleetSettings& s, std::ostream& progress);

}  // namespace railyard::validate
