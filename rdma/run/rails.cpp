#include "rdma/run/rails.h"

#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include "rdma/transport/socket.h"
#include "topology/sysfs/rdma.h"

namespace railyard::rdma {

std::vector<std::string> rail_entries(const std::string& flag, const char* nccl_ib_hca) {
  std::string list = flag;
  if (list.empty() && nccl_ib_hca) {
    list = nccl_ib_hca;
    if (!list.empty() && list[0] == '^')
      throw std::invalid_argument("NCCL_IB_HCA '" + list +
                                  "' excludes devices: name the rails with --rails");
    if (!list.empty() && list[0] == '=') list.erase(0, 1);
  }
  std::vector<std::string> out;
  for (size_t start = 0; start <= list.size();) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  if (out.empty())
    throw std::invalid_argument(
        "--rails: give one or more rail interfaces, addresses or RDMA devices (or set "
        "NCCL_IB_HCA)");
  return out;
}

std::string resolve_rail(const std::string& entry, const std::filesystem::path& sysfs_root) {
  const topology::Sysfs sysfs(sysfs_root);
  std::string name = entry;
  int port = 1;
  if (const auto colon = name.find(':'); colon != std::string::npos) {
    if (sysfs.open_dir(sysfs.sys("class/infiniband/" + name.substr(0, colon)))) {
      port = std::atoi(name.c_str() + colon + 1);  // "mlx5_3:1": the device and its port
      name = name.substr(0, colon);
    }
  }
  if (sysfs.open_dir(sysfs.sys("class/infiniband/" + name))) {
    const std::string netdev = topology::rdma_netdev(sysfs, name, port > 0 ? port : 1);
    if (netdev.empty())
      throw NetError("RDMA device '" + name + "' has no netdev in this network namespace");
    return rail_address(netdev);
  }
  return rail_address(name);
}

}  // namespace railyard::rdma
