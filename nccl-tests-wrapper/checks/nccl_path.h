// nccl-path: whether NCCL used the rails a run meant it to (from its INFO log, nccl/nccl_log.h),
// over IB, and with GPUDirect RDMA where gpuDirect asks for it.
#pragma once

#include <string>
#include <vector>

#include "nccl-tests-wrapper/checks/finding.h"
#include "nccl-tests-wrapper/nccl/nccl_log.h"

namespace railyard::validate {

// `expected`: the RDMA devices of the rails under test ("mlx5_0"). gpu_direct: "off", "warn" or
// "require" (GDRDMA on every IB channel).
Finding judge_nccl_path(const std::string& subject, const NcclNetUse& use,
                        const std::vector<std::string>& expected, const std::string& gpu_direct);

}  // namespace railyard::validate
