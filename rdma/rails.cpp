#include "rdma/rails.h"

#include <stdexcept>
#include <system_error>

#include "rdma/socket.h"

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
  namespace fs = std::filesystem;
  std::string name = entry;
  const auto colon = name.find(':');
  std::error_code ec;
  if (colon != std::string::npos) {
    const fs::path dev = sysfs_root / "sys/class/infiniband" / name.substr(0, colon);
    if (fs::exists(dev, ec)) name = name.substr(0, colon);  // "mlx5_3:1": the device
  }
  const fs::path net = sysfs_root / "sys/class/infiniband" / name / "device/net";
  if (fs::is_directory(net, ec)) {
    for (const auto& e : fs::directory_iterator(net, ec))
      return rail_address(e.path().filename().string());
    throw NetError("RDMA device '" + name + "' has no netdev in this network namespace");
  }
  return rail_address(name);
}

}  // namespace railyard::rdma
