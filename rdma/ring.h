// Ring allreduce (reduce-scatter, then all-gather) over TCP, striped across rails: rail k carries
// slice k of the buffer around its own ring, on a thread of its own. Within a step the send to
// the next rank, the receive from the previous one and the reduction of what has arrived so far
// overlap (non-blocking sockets, one poll loop).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rdma/bootstrap.h"
#include "rdma/reduce.h"
#include "rdma/socket.h"

namespace railyard::rdma {

class TcpRing {
 public:
  // Connects rail k to the next rank's rail k listener (from this rank's rail k address) and
  // accepts the previous rank's. `listeners` are this rank's, already listening.
  TcpRing(int rank, int world, const std::vector<std::string>& rail_addresses,
          std::vector<Socket> listeners, const Table& table, std::chrono::milliseconds timeout);

  // In-place sum over all ranks. Returns each rail's time for its slice, in seconds.
  std::vector<double> allreduce(void* data, size_t count, DType type);
  int world() const { return world_; }
  size_t rails() const { return next_.size(); }

 private:
  int rank_, world_;
  std::vector<Socket> next_, prev_;
  std::vector<std::vector<char>>
      scratch_;  // per rail, kept across calls: fresh pages cost more than the copy
  std::chrono::milliseconds timeout_;
};

}  // namespace railyard::rdma
