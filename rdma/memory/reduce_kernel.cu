#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "rdma/memory/reduce_kernel.h"

namespace railyard::rdma {
namespace {

template <typename T>
struct Sum {
  __device__ static T add(T a, T b) { return a + b; }
};
// Half types: summed in float32, rounded to nearest even, as the CPU path and NCCL do.
template <>
struct Sum<__half> {
  __device__ static __half add(__half a, __half b) {
    return __float2half_rn(__half2float(a) + __half2float(b));
  }
};
template <>
struct Sum<__nv_bfloat16> {
  __device__ static __nv_bfloat16 add(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __float2bfloat16_rn(__bfloat162float(a) + __bfloat162float(b));
  }
};

// Grid-stride: one launch of a fixed grid covers any n; consecutive threads touch consecutive
// elements, so the loads coalesce.
// (No __restrict__: dst is a when in place.)
template <typename T>
__global__ void sum_kernel(T* dst, const T* a, const T* b, size_t n) {
  const size_t stride = size_t{blockDim.x} * gridDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = Sum<T>::add(a[i], b[i]);
}

template <typename T>
cudaError_t launch(void* dst, const void* a, const void* b, size_t n, cudaStream_t stream) {
  constexpr unsigned threads = 512;
  const size_t want = (n + threads - 1) / threads;
  const unsigned blocks = static_cast<unsigned>(want < 1024 ? (want ? want : 1) : 1024);
  sum_kernel<T><<<blocks, threads, 0, stream>>>(static_cast<T*>(dst), static_cast<const T*>(a),
                                                static_cast<const T*>(b), n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_reduce_sum(void* dst, const void* a, const void* b, size_t n, DType t,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (t) {
    case DType::kFloat32:
      return launch<float>(dst, a, b, n, stream);
    case DType::kFloat16:
      return launch<__half>(dst, a, b, n, stream);
    case DType::kBFloat16:
      return launch<__nv_bfloat16>(dst, a, b, n, stream);
    case DType::kInt32:
      return launch<int>(dst, a, b, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace railyard::rdma
