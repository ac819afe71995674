#include "rdma/memory/cuda_memory.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "rdma/memory/reduce_kernel.h"

namespace railyard::rdma {
namespace {

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(e));
}

// Driver calls through the runtime's entry points: no link against libcuda, which only GPU
// nodes have.
template <typename Fn>
Fn driver_entry(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(fn);
}

constexpr size_t kAlign =
    2u << 20;  // dma-buf export wants page-aligned ranges; GPU pages are 2 MiB

class CudaMemory final : public Memory {
 public:
  explicit CudaMemory(int device) : device_(device) {
    check(cudaSetDevice(device_), "cudaSetDevice(" + std::to_string(device_) + ")");
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, device_), "cudaGetDeviceProperties");
    name_ = p.name;
    using GetAttr = CUresult (*)(int*, CUdevice_attribute, CUdevice);
    if (auto get = driver_entry<GetAttr>("cuDeviceGetAttribute")) {
      int v = 0;
      dmabuf_ = get(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device_) == CUDA_SUCCESS && v;
    }
  }

  std::string describe() const override {
    return "cuda:" + std::to_string(device_) + " (" + name_ + ")";
  }
  bool on_device() const override { return true; }

  void* alloc(size_t bytes) override {
    use();
    const size_t len = (bytes + kAlign - 1) / kAlign * kAlign;
    void* p = nullptr;
    check(cudaMalloc(&p, len), "cudaMalloc " + std::to_string(len));
    std::lock_guard<std::mutex> g(mu_);
    allocations_[static_cast<char*>(p)] = len;
    return p;
  }
  void release(void* p, size_t) override {
    use();
    cudaFree(p);
    std::lock_guard<std::mutex> g(mu_);
    allocations_.erase(static_cast<char*>(p));
  }
  void* alloc_staging(size_t bytes) override {
    use();
    void* p = nullptr;
    check(cudaHostAlloc(&p, bytes, cudaHostAllocPortable), "cudaHostAlloc");
    return p;
  }
  void release_staging(void* p, size_t) override { cudaFreeHost(p); }

  // Each rail's thread has its own default stream, so the rails' kernels and copies overlap.
  void reduce(void* dst, const void* a, const void* b, size_t n, DType t) override {
    use();
    check(cuda_reduce_sum(dst, a, b, n, t, cudaStreamPerThread), "reduction kernel");
    check(cudaStreamSynchronize(cudaStreamPerThread), "reduction kernel");
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    if (dst == src || bytes == 0) return;
    use();
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cudaStreamPerThread), "cudaMemcpy");
    check(cudaStreamSynchronize(cudaStreamPerThread), "cudaMemcpy");
  }

  bool dmabuf_supported() const override { return dmabuf_; }
  std::optional<DmaBuf> export_dmabuf(const void* p) override {
    using GetHandle =
        CUresult (*)(void*, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);
    static const auto get = driver_entry<GetHandle>("cuMemGetHandleForAddressRange");
    if (!get) return std::nullopt;
    char* base = nullptr;
    size_t len = 0;
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = allocations_.upper_bound(const_cast<char*>(static_cast<const char*>(p)));
      if (it == allocations_.begin()) return std::nullopt;
      --it;
      if (static_cast<const char*>(p) >= it->first + it->second) return std::nullopt;
      base = it->first;
      len = it->second;
    }
    int fd = -1;
    if (get(&fd, reinterpret_cast<CUdeviceptr>(base), len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
            0) != CUDA_SUCCESS)
      return std::nullopt;
    return DmaBuf{fd, base, len};
  }

 private:
  void use() const { cudaSetDevice(device_); }  // the current device is per thread

  int device_;
  std::string name_;
  bool dmabuf_ = false;
  std::mutex mu_;
  std::map<char*, size_t> allocations_;
};

}  // namespace

bool cuda_built() {
  return true;
}

int cuda_device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::unique_ptr<Memory> cuda_memory(int device) {
  const int n = cuda_device_count();
  if (n == 0) throw std::runtime_error("--memory cuda: no GPU (the CUDA driver shows none)");
  if (device < 0 || device >= n)
    throw std::runtime_error("--gpu " + std::to_string(device) + ": there are " +
                             std::to_string(n) + " GPUs");
  return std::make_unique<CudaMemory>(device);
}

}  // namespace railyard::rdma
