// Point-to-point per rail between two ranks, as perftest measures one link: rank 0 connects to
// rank 1 on each rail (from its rail address, so source-based routing keeps it there) and, rail
// by rail, times 0->1, 1->0 and both directions at once, and the half round trip (latency).
// Both ranks call measure() with the same arguments; rank 0 gets the numbers.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "rdma/bootstrap.h"
#include "rdma/socket.h"

namespace railyard::rdma {

struct P2pResult {
  double gbps_0to1 = 0, gbps_1to0 = 0, gbps_both = 0;  // GB/s; "both" is the sum of directions
  double latency_us = 0;                               // half a round trip of one message
  size_t wrong = 0;                                    // bytes received that were not sent
};

class TcpPair {
 public:
  TcpPair(int rank, const std::vector<std::string>& rail_addresses, std::vector<Socket> listeners,
          const Table& table, std::chrono::milliseconds timeout);
  P2pResult measure(size_t rail, size_t bytes, int iters, int warmup, bool check);
  size_t rails() const { return links_.size(); }

 private:
  void send_stream(const Socket& s, size_t bytes, int iters, const std::string& peer);
  size_t recv_stream(const Socket& s, size_t bytes, int iters, bool check, const std::string& peer);
  size_t duplex(const Socket& s, size_t bytes, int iters, bool check, const std::string& peer);

  int rank_;
  std::vector<Socket> links_;
  std::vector<char> out_, in_;
  std::chrono::milliseconds timeout_;
};

}  // namespace railyard::rdma
