// cuda_memory.h where CMake found no CUDA: the flags stay, the answer is a clear error.
#include <stdexcept>

#include "rdma/memory/cuda_memory.h"

namespace railyard::rdma {

bool cuda_built() {
  return false;
}
int cuda_device_count() {
  return 0;
}
std::unique_ptr<Memory> cuda_memory(int) {
  throw std::runtime_error("--memory cuda: this railyard-bench was built without CUDA");
}

}  // namespace railyard::rdma
