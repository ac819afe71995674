// The CUDA side of cuda_memory.h: dst[i] += src[i] on the GPU, launched on `stream`. `src` may be
// device memory or pinned host memory (the GPU reads it over PCIe). Returns cudaSuccess or the
// launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "rdma/reduce.h"

namespace railyard::rdma {

cudaError_t cuda_reduce_sum(void* dst, const void* src, size_t n, DType t, cudaStream_t stream);

}  // namespace railyard::rdma
