// The CUDA side of cuda_memory.h: dst[i] = a[i] + b[i] on the GPU (dst may be a), launched on
// `stream`. `b` may be device memory or pinned host memory (the GPU reads it over PCIe). Returns
// cudaSuccess or the launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "rdma/memory/reduce.h"

namespace railyard::rdma {

cudaError_t cuda_reduce_sum(void* dst, const void* a, const void* b, size_t n, DType t,
                            cudaStream_t stream);

}  // namespace railyard::rdma
