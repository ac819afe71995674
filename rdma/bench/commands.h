// railyard-bench's commands; each prints its table (rank 0), writes --json / --plot, and
// returns the exit status: 0 when every element checked out, 1 when any was wrong.
#pragma once

#include "rdma/bench/options.h"

namespace railyard::rdma::bench {

int run_allreduce(const Options& o);  // nccl-tests' all_reduce_perf table, per-rail summary
int run_p2p(const Options& o);        // per rail: 0->1, 1->0, both, latency (perftest's view)
int run_reduce(const Options& o);     // the sum alone, CPU or GPU, no network

}  // namespace railyard::rdma::bench
