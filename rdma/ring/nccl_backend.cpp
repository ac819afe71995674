#include "rdma/ring/nccl_backend.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <chrono>
#include <stdexcept>

namespace railyard::rdma {
namespace {

// The NCCL entry points railyard-bench uses, resolved from libnccl.so.2.
struct Nccl {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetVersion) get_version = nullptr;
};

const Nccl& nccl() {
  static const Nccl n = [] {
    void* h = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!h)
      throw std::runtime_error(std::string("--transport nccl: cannot load libnccl.so.2 (") +
                               ::dlerror() + ")");
    Nccl x;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
      if (!fn) throw std::runtime_error(std::string("libnccl.so.2 has no ") + name);
    };
    sym(x.get_unique_id, "ncclGetUniqueId");
    sym(x.comm_init_rank, "ncclCommInitRank");
    sym(x.comm_destroy, "ncclCommDestroy");
    sym(x.all_reduce, "ncclAllReduce");
    sym(x.error_string, "ncclGetErrorString");
    sym(x.get_version, "ncclGetVersion");
    return x;
  }();
  return n;
}

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + nccl().error_string(r));
}
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kInt32:
      return ncclInt32;
  }
  return ncclFloat32;
}

class NcclCollective final : public Collective {
 public:
  NcclCollective(int rank, int world, const std::string& id, int device)
      : world_(world), device_(device) {
    if (id.size() != NCCL_UNIQUE_ID_BYTES) throw std::runtime_error("bad NCCL unique id");
    check(cudaSetDevice(device_), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ncclUniqueId uid;
    std::copy(id.begin(), id.end(), uid.internal);
    check(nccl().comm_init_rank(&comm_, world, uid, rank), "ncclCommInitRank");
    int v = 0;
    nccl().get_version(&v);
    version_ = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
               std::to_string(v % 100);
  }
  ~NcclCollective() override {
    if (comm_) nccl().comm_destroy(comm_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::vector<double> allreduce(const void* send, void* recv, size_t count, DType type) override {
    cudaSetDevice(device_);
    const auto t0 = std::chrono::steady_clock::now();
    check(nccl().all_reduce(send, recv, count, nccl_type(type), ncclSum, comm_, stream_),
          "ncclAllReduce");
    check(cudaStreamSynchronize(stream_), "ncclAllReduce");
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  }
  int world() const override { return world_; }
  size_t rails() const override { return 1; }
  std::string describe_rail(size_t) const override {
    const char* hca = std::getenv("NCCL_IB_HCA");
    return "NCCL " + version_ + (hca ? std::string(", NCCL_IB_HCA=") + hca : std::string());
  }

 private:
  int world_, device_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::string version_;
};

}  // namespace

bool nccl_built() {
  return true;
}

std::string nccl_unique_id(int rank) {
  const Nccl& n = nccl();
  if (rank != 0) return {};
  ncclUniqueId id;
  check(n.get_unique_id(&id), "ncclGetUniqueId");
  return std::string(id.internal, sizeof id.internal);
}

std::unique_ptr<Collective> nccl_collective(int rank, int world, const std::string& unique_id,
                                            int device) {
  return std::make_unique<NcclCollective>(rank, world, unique_id, device);
}

}  // namespace railyard::rdma
