#include "rdma/memory/memory.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace railyard::rdma {
namespace {

constexpr size_t kHuge = 2u << 20;

class HostMemory final : public Memory {
 public:
  explicit HostMemory(bool hugepages) : hugepages_(hugepages) {}
  std::string describe() const override { return hugepages_ ? "host (hugepages)" : "host"; }
  bool on_device() const override { return false; }

  // mmap: page-aligned, and whole pages the kernel can back with hugepages.
  void* alloc(size_t bytes) override {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    if (hugepages_ && bytes >= kHuge) ::madvise(p, bytes, MADV_HUGEPAGE);  // a hint: may be off
    return p;
  }
  void release(void* p, size_t bytes) override { ::munmap(p, bytes); }
  void* alloc_staging(size_t bytes) override { return alloc(bytes); }
  void release_staging(void* p, size_t bytes) override { release(p, bytes); }
  void reduce(void* dst, const void* a, const void* b, size_t n, DType t) override {
    reduce_sum(dst, a, b, n, t);
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    if (dst != src) std::memcpy(dst, src, bytes);
  }

 private:
  bool hugepages_;
};

}  // namespace

std::unique_ptr<Memory> host_memory(bool hugepages) {
  return std::make_unique<HostMemory>(hugepages);
}

}  // namespace railyard::rdma
