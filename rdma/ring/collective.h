// What railyard-bench times: an allreduce, by our ring (ring.h, over TCP or verbs links) or by
// NCCL (nccl_backend.h). Out-of-place when send != recv, as nccl-tests runs both.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rdma/memory/reduce.h"

namespace railyard::rdma {

class Collective {
 public:
  virtual ~Collective() = default;
  // Sum over all ranks of `send` into `recv` (data memory). Returns each rail's time in seconds.
  virtual std::vector<double> allreduce(const void* send, void* recv, size_t count, DType type) = 0;
  virtual int world() const = 0;
  virtual size_t rails() const = 0;
  // For the header and the per-rail summary: "tcp 10.0.0.1", "verbs mlx5_0:1 ...", "NCCL 2.28.9".
  virtual std::string describe_rail(size_t k) const = 0;
  // Data memory the next allreduce calls will use (so verbs registers it once).
  virtual void prepare(void* /*base*/, size_t /*bytes*/) {}
};

}  // namespace railyard::rdma
