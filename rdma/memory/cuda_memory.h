// CUDA device memory for the benchmark's buffers: cudaMalloc'd data, pinned host staging, a CUDA
// reduction kernel (reduce_kernel.cu: float32, float16, bfloat16, int32, the half types summed in
// float32), and dma-buf export for GPUDirect RDMA. Built when CMake finds CUDA; otherwise
// cuda_memory() says so. The CUDA runtime is linked statically and finds the driver at run time,
// so railyard-bench starts on nodes without a GPU and fails only when asked for one.
#pragma once

#include <memory>

#include "rdma/memory/memory.h"

namespace railyard::rdma {

// Whether this build has CUDA, and how many GPUs the driver shows (0 without a driver).
bool cuda_built();
int cuda_device_count();

// Device memory on GPU `device`. Throws std::runtime_error when there is none (or no CUDA build).
std::unique_ptr<Memory> cuda_memory(int device);

}  // namespace railyard::rdma
