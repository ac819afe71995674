// Ring allreduce (reduce-scatter, then all-gather), striped across rails: rail k carries slice k
// of the buffer around its own ring, on a thread of its own, over whatever RingLink it has (TCP
// or verbs). What each step moves is schedule.h's; summing and copying is the Memory's, so the
// same ring runs on host and CUDA memory.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "rdma/collective.h"
#include "rdma/link.h"
#include "rdma/memory.h"
#include "rdma/reduce.h"

namespace railyard::rdma {

class Ring final : public Collective {
 public:
  // links[k]: rail k's link (empty when world == 1).
  Ring(int rank, int world, std::vector<std::unique_ptr<RingLink>> links, Memory& memory);
  ~Ring() override;

  // In-place sum over all ranks of `data` (data memory). Returns each rail's time, in seconds.
  std::vector<double> allreduce(void* data, size_t count, DType type);
  // Out-of-place: recv = the sum of every rank's send; send is left as it was.
  std::vector<double> allreduce(const void* send, void* recv, size_t count, DType type) override;
  int world() const override { return world_; }
  size_t rails() const override { return links_.size(); }
  std::string describe_rail(size_t k) const override { return links_[k]->describe(); }
  void prepare(void* base, size_t bytes) override;

 private:
  int rank_, world_;
  std::vector<std::unique_ptr<RingLink>> links_;
  Memory& memory_;
  struct Scratch {
    void* p = nullptr;
    size_t bytes = 0;
  };
  std::vector<Scratch> scratch_;  // per rail, kept across calls: fresh pages cost more than reuse
};

}  // namespace railyard::rdma
