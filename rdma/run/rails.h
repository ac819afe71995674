// Which rails a run uses: --rails, else NCCL_IB_HCA as railyard-validate and the device plugin
// set it ("=mlx5_0:1,mlx5_3:1"), so that railyard-bench runs where all_reduce_perf would. An
// entry is an IPv4 address, a netdev, or an RDMA device (port suffix allowed), whose netdev is
// read from sysfs (RAILYARD_SYSFS_ROOT): in a pod, the VF's netdev as railyard-cni named it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace railyard::rdma {

// The entries of a comma-separated list, or of NCCL_IB_HCA when the list is empty. Throws
// std::invalid_argument when both are empty, or for an exclusion list ("^...").
std::vector<std::string> rail_entries(const std::string& flag, const char* nccl_ib_hca);

// An entry's IPv4 address. Throws NetError naming the entry.
std::string resolve_rail(const std::string& entry, const std::filesystem::path& sysfs_root);

}  // namespace railyard::rdma
