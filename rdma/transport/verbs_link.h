// The ring over ibverbs RC: per rail, a queue pair to the next rank (RDMA WRITE with immediate
// into its receive slots) and one from the previous rank (whose writes land in ours), set up over
// the rail's TCP connections. The receiver hands each landed piece to the ring (reduce or copy),
// then returns a credit for the slot, so `slots` pieces are in flight per direction and the
// send, the wire and the reduction overlap. Data is written straight from the registered buffer
// (host memory, or GPU memory by dma-buf or nvidia-peermem), or staged through pinned host memory.
// An idle link spins 50 us, then sleeps on the completion channel and the neighbours' sockets.
//
// Compiled in every build; it runs where an RDMA device is: in CI, the rails lab's soft-RoCE
// (`ctest -L lab`) with host memory; GPU memory only compiles (see README.md).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "rdma/memory/memory.h"
#include "rdma/ring/link.h"
#include "rdma/transport/socket.h"
#include "rdma/transport/verbs_choice.h"

namespace railyard::rdma {

struct VerbsOptions {
  RailPlan plan;  // device, port, GID (verbs_choice.h)
  RegPath registration = RegPath::kHost;
  size_t slot_bytes = 1u << 20;  // the largest write, and one receive slot
  int slots = 8;                 // receive slots per direction: the pieces in flight
  int traffic_class = 0;         // NCCL_IB_TC, for RoCE fabrics that map it to a lossless queue
};

// Opens the device and connects both queue pairs through the neighbours' sockets, which the
// link keeps (a closed socket is how a dead peer shows while the NIC retries). Throws NetError.
std::unique_ptr<RingLink> make_verbs_link(Socket next, Socket prev, std::string next_name,
                                          std::string prev_name, Memory& memory,
                                          const VerbsOptions& options,
                                          std::chrono::milliseconds timeout);

}  // namespace railyard::rdma
