#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {

std::string NodeView::rail_name(size_t k) const {
  return "rail " + std::to_string(k) + " (" + rail_nic(k).pf.rdma_name() + ")";
}

const std::vector<CheckRow>& check_table() {
  static const std::vector<CheckRow> rows = {
      {"port", [](const Checks& s) { return s.port_active; }, port_check()},
      {"rate", [](const Checks& s) { return s.expected_rate_gbps.has_value(); }, rate_check()},
      {"pcie", [](const Checks& s) { return s.pcie_not_degraded; }, pcie_link_check()},
      {"firmware", [](const Checks& s) { return s.firmware; }, firmware_check()},
      {"mtu", [](const Checks& s) { return s.min_mtu.has_value() || s.fabric_mtu != 0; },
       mtu_check()},
      {"roce-qos", [](const Checks& s) { return s.roce_qos; }, roce_qos_check()},
      {"roce-gid", [](const Checks& s) { return s.roce_gid; }, roce_gid_check()},
      // Where a GPU sits from its NIC is always judged; its ACS only when pcieAcs is on.
      {"path", [](const Checks&) { return true; }, path_check()},
      {"gpudirect", [](const Checks& s) { return s.gpu_direct != "off"; }, gpudirect_check()},
      {"nccl-path", [](const Checks& s) { return s.nccl_path; }, nccl_path_check()},
      {"port-errors", [](const Checks& s) { return s.port_errors || s.link_flaps; },
       counters_check()},
  };
  return rows;
}

std::vector<const NodeCheck*> enabled_checks(const Checks& settings) {
  std::vector<const NodeCheck*> out;
  for (const auto& row : check_table())
    if (row.enabled(settings)) out.push_back(&row.check);
  return out;
}

}  // namespace railyard::validate
