// railyard-validate fleet's fast path: a group of ranks runs railyard-bench's ring allreduce,
// striped over every rail, and the group's first member reports each rail's bus bandwidth. A
// ring is as fast as its slowest link, so comparing two halves of a fleet tells which half holds
// a straggler (run.h bisects with it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/fleet/pair.h"
#include "rdma/run/bootstrap.h"

namespace railyard::validate {

struct RingOutcome {
  std::vector<std::optional<double>> busbw;  // GB/s per rail; index 0 only; empty on failure
  std::string error;
};

// Every member calls this at the same time with the same `table` (each member's listener per
// rail, in ring order) and `names` (how errors name each member: "rank 3 (node-3)");
// `listeners` are this member's. Message size and iterations from `o`.
RingOutcome test_ring(const rdma::bench::Options& o, const FleetRails& rails,
                      const topology::Sysfs& sysfs, int index, std::vector<rdma::Socket> listeners,
                      const rdma::Table& table, const std::vector<std::string>& names);

}  // namespace railyard::validate
