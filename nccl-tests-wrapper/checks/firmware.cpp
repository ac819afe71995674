// firmware: every rail NIC on one firmware (fw_ver, with the board id where sysfs has it: two
// NIC models on the rails are a mismatch too), the version the config names when it names one,
// else the version most rails run. Bring-up guides insist on one firmware across a fabric: a
// NIC left behind by an update trains, routes congestion and recovers from errors differently.
#include "nccl-tests-wrapper/checks/firmware.h"

#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

std::string split_text(const std::map<std::string, int>& count) {
  std::string out;
  for (const auto& [text, n] : count)
    out += (out.empty() ? "" : ", ") + text + " on " + std::to_string(n);
  return out;
}

class FirmwareCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    const std::vector<std::string> fw = rail_firmware(v.node);
    const FirmwareTally tally = tally_firmware(fw);
    const std::string& majority = tally.majority;
    const auto& named = v.settings.firmware_version;
    for (size_t k = 0; k < v.rails(); ++k) {
      const std::string who = v.rail_name(k);
      const topology::Nic& nic = v.rail_nic(k);
      const std::string fw_ver = nic.pf.rdma ? nic.pf.rdma->fw_ver : "";
      nlohmann::json e = {{"fw_ver", fw_ver},
                          {"board_id", nic.pf.rdma ? nic.pf.rdma->board_id : ""}};
      Finding finding;
      if (fw[k].empty()) {
        finding = Finding::unknown_because(who, "firmware", "the driver shows no fw_ver");
      } else if (named) {
        e["expected"] = *named;
        finding = Finding::judged(
            who, "firmware", fw_ver == *named,
            "firmware " + fw[k] +
                (fw_ver == *named ? ", as the config names" : ", the config names " + *named));
      } else if (majority.empty()) {
        e["rails"] = tally.count;
        finding = Finding::judged(who, "firmware", false,
                                  "firmware " + fw[k] + ": the rails disagree with no majority (" +
                                      split_text(tally.count) + ")");
      } else {
        e["expected"] = majority;
        const std::string of = std::to_string(tally.count.at(majority)) + " of " +
                               std::to_string(tally.known) + " rails";
        finding = Finding::judged(
            who, "firmware", fw[k] == majority,
            "firmware " + fw[k] +
                (fw[k] == majority ? ", as " + of : ", but " + of + " run " + majority));
      }
      out.push_back(std::move(finding.with(std::move(e)).on_rail(static_cast<int>(k))));
    }
  }
};

}  // namespace

std::vector<std::string> rail_firmware(const topology::Node& node) {
  std::vector<std::string> out;
  for (int r : node.rails) {
    const auto& rdma = node.nics[static_cast<size_t>(r)].pf.rdma;
    if (!rdma || rdma->fw_ver.empty()) {
      out.emplace_back();
      continue;
    }
    out.push_back(rdma->fw_ver + (rdma->board_id.empty() ? "" : " (board " + rdma->board_id + ")"));
  }
  return out;
}

FirmwareTally tally_firmware(const std::vector<std::string>& versions) {
  FirmwareTally t;
  for (const auto& v : versions)
    if (!v.empty()) {
      ++t.count[v];
      ++t.known;
    }
  for (const auto& [text, n] : t.count)
    if (2 * n > t.known) t.majority = text;
  return t;
}

const NodeCheck& firmware_check() {
  static const FirmwareCheck c;
  return c;
}

}  // namespace railyard::validate
