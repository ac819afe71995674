// nccl_backend.h where CMake found no NCCL.
#include <stdexcept>

#include "rdma/ring/nccl_backend.h"

namespace railyard::rdma {

bool nccl_built() {
  return false;
}
std::string nccl_unique_id(int) {
  throw std::runtime_error("--transport nccl: this railyard-bench was built without NCCL");
}
std::unique_ptr<Collective> nccl_collective(int, int, const std::string&, int) {
  throw std::runtime_error("--transport nccl: this railyard-bench was built without NCCL");
}

}  // namespace railyard::rdma
