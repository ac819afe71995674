// Ring allreduce (reduce-scatter, then all-gather), striped across rails: rail k carries slice k
// of the buffer around its own ring, on a thread of its own, over whatever RingLink it has (TCP
// or verbs). What each step moves is schedule.h's; summing and copying is the Memory's, so the
// same ring runs on host and CUDA memory.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "rdma/memory/memory.h"
#include "rdma/memory/reduce.h"
#include "rdma/ring/collective.h"
#include "rdma/ring/link.h"

namespace railyard::rdma {

class Ring final : public Collective {
 public:
  // links[k]: rail k's link (empty when world == 1).
  Ring(int rank, int world, std::vector<std::unique_ptr<RingLink>> links, Memory& memory);

  // recv = the sum of every rank's send (data memory; send == recv is in place). Returns each
  // rail's time, in seconds.
  std::vector<double> allreduce(const void* send, void* recv, size_t count, DType type) override;
  int world() const override { return world_; }
  size_t rails() const override { return links_.size(); }
  std::string describe_rail(size_t k) const override { return links_[k]->describe(); }
  void prepare(void* base, size_t bytes) override;

 private:
  int rank_, world_;
  std::vector<std::unique_ptr<RingLink>> links_;
  Memory& memory_;
};

}  // namespace railyard::rdma
