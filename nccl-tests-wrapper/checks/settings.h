// What the node checks are told by the config's "checks" section (run/config.h reads it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace railyard::validate {

struct Checks {
  bool port_active = true;
  std::optional<double> expected_rate_gbps;
  bool pcie_not_degraded = true;
  std::optional<int> min_mtu;
  bool roce_gid = true;
  std::string max_path_class = "PXB";
  std::string gpu_direct = "warn";
  int fabric_mtu = 4096;
  bool roce_qos = true;
  int roce_priority = 3;
  bool require_ecn = true;
  bool pcie_acs = true;
  bool port_errors = true;
  std::map<std::string, uint64_t> counter_thresholds;  // growth allowed over the run
  bool link_flaps = true;
  int max_link_flaps = 0;
  bool nccl_path = true;
  double timeline_hz = 10;
  // firmware: every rail NIC on one version (and board), the named one when given.
  bool firmware = true;
  std::optional<std::string> firmware_version;
};

}  // namespace railyard::validate
