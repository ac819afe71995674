// Point-to-point per rail between two ranks, as perftest measures one link: over each rail's
// RingLink (TCP or verbs; in a ring of two, next and previous are both the peer), rail by rail,
// 0->1, 1->0, both directions at once, and the half round trip (latency). Both ranks call
// measure() with the same arguments; rank 0 gets the numbers.
#pragma once

#include <memory>
#include <vector>

#include "rdma/memory/memory.h"
#include "rdma/ring/link.h"

namespace railyard::rdma {

struct P2pResult {
  double gbps_0to1 = 0, gbps_1to0 = 0, gbps_both = 0;  // GB/s; "both" is the sum of directions
  double latency_us = 0;                               // half a round trip of one message
  size_t wrong = 0;                                    // bytes received that were not sent
};

class LinkPair {
 public:
  // Messages up to `max_bytes`, in `memory` (host or GPU).
  LinkPair(int rank, std::vector<std::unique_ptr<RingLink>> links, Memory& memory,
           size_t max_bytes);
  P2pResult measure(size_t rail, size_t bytes, int iters, int warmup, bool check);
  size_t rails() const { return links_.size(); }
  const RingLink& link(size_t k) const { return *links_[k]; }

 private:
  int rank_;
  std::vector<std::unique_ptr<RingLink>> links_;
  Memory& memory_;
  Buffer out_, in_, ctrl_;            // ctrl_: the 1-byte handshakes and the wrong-byte count
  std::vector<char> pattern_, host_;  // what every message holds; a host copy to check against
};

}  // namespace railyard::rdma
