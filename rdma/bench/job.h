// What an allreduce or p2p run sets up before it measures: who this rank is, its rails (and for
// verbs, each rail's device, GID and MTU, checked before anyone waits on this rank), the
// rendezvous, the buffers' memory, the connections to the ring neighbours, and from them each
// rail's link (TCP or verbs).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "rdma/bench/options.h"
#include "rdma/memory/memory.h"
#include "rdma/ring/link.h"
#include "rdma/run/bootstrap.h"
#include "rdma/run/launch.h"
#include "rdma/transport/verbs_choice.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::rdma::bench {

struct Job {
  Launch launch;
  std::vector<std::string> entries;    // --rails (or NCCL_IB_HCA) as given
  std::vector<std::string> addresses;  // each rail's IPv4 address
  std::vector<RailPlan> plans;         // verbs only
  topology::Sysfs sysfs;
  std::unique_ptr<Memory> memory;
  RingSockets ring;
  std::chrono::milliseconds timeout;
};

// Throws std::invalid_argument for bad flags, NetError naming the rank that did not come.
Job start_job(const Options& o);

// Each rail's link over the job's neighbour connections (which it takes).
std::vector<std::unique_ptr<RingLink>> make_links(const Options& o, Job& job);

}  // namespace railyard::rdma::bench
