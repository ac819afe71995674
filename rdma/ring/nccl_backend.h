// --transport nccl: ncclAllReduce on CUDA memory, beside our own ring, with NCCL's choice of
// rails (NCCL_IB_HCA, set from --rails when the rails are RDMA devices). NCCL is loaded at run
// time (libnccl.so.2), so railyard-bench needs it only when asked for it. The unique id goes
// from rank 0 around the ring's TCP connections.
#pragma once

#include <memory>
#include <string>

#include "rdma/ring/collective.h"

namespace railyard::rdma {

// Whether this build has the NCCL backend (CMake found nccl.h and CUDA).
bool nccl_built();

// Loads NCCL; on rank 0 makes the unique id (128 bytes), elsewhere returns "". Throws
// std::runtime_error naming what is missing.
std::string nccl_unique_id(int rank);

// A communicator over all ranks on GPU `device`.
std::unique_ptr<Collective> nccl_collective(int rank, int world, const std::string& unique_id,
                                            int device);

}  // namespace railyard::rdma
