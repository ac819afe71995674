// Where the benchmark's buffers live and how they are summed and copied: host memory
// (page-aligned, transparent hugepages on request) or CUDA device memory (cuda_memory.h). The ring
// and the transports only use this interface, so one ring serves both.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "rdma/memory/reduce.h"

namespace railyard::rdma {

class Memory {
 public:
  virtual ~Memory() = default;
  // "host", "host (hugepages)", "cuda:0": printed in the header of a run.
  virtual std::string describe() const = 0;
  virtual bool on_device() const = 0;

  // Buffers the data lives in: host or device memory.
  virtual void* alloc(size_t bytes) = 0;
  virtual void release(void* p, size_t bytes) = 0;
  // Host memory the transports stage through: pinned (page-locked, device-visible) for CUDA.
  virtual void* alloc_staging(size_t bytes) = 0;
  virtual void release_staging(void* p, size_t bytes) = 0;

  // dst[i] = a[i] + b[i]; dst and a are data memory (dst == a: in place, otherwise disjoint),
  // b data or staging memory.
  virtual void reduce(void* dst, const void* a, const void* b, size_t n, DType t) = 0;
  // Any direction between host, staging and data memory; returns when done.
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;

  // GPUDirect RDMA through dma-buf: the allocation holding `p`, exported as a dma-buf the NIC
  // can register (ibv_reg_dmabuf_mr). The caller closes the fd. nullopt for host memory.
  struct DmaBuf {
    int fd = -1;
    void* base = nullptr;
    size_t len = 0;
  };
  virtual bool dmabuf_supported() const { return false; }
  virtual std::optional<DmaBuf> export_dmabuf(const void* /*p*/) { return std::nullopt; }
};

// Page-aligned host memory; with `hugepages`, buffers of 2 MiB and more ask for transparent
// hugepages (madvise), which fewer TLB misses make faster to reduce into.
std::unique_ptr<Memory> host_memory(bool hugepages);

// A buffer of data memory that gives itself back.
class Buffer {
 public:
  Buffer(Memory& m, size_t bytes) : m_(&m), bytes_(bytes), p_(bytes ? m.alloc(bytes) : nullptr) {}
  ~Buffer() {
    if (p_) m_->release(p_, bytes_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* data() const { return static_cast<char*>(p_); }
  size_t size() const { return bytes_; }

 private:
  Memory* m_;
  size_t bytes_;
  void* p_;
};

}  // namespace railyard::rdma
