// firmware: every rail NIC on one firmware (fw_ver, with the board id where sysfs has it: two
// NIC models on the rails are a mismatch too), the version the config names when it names one,
// else the version most rails run. Bring-up guides insist on one firmware across a fabric: a
// NIC left behind by an update trains, routes congestion and recovers from errors differently.
#include <map>

#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

struct Firmware {
  std::string fw_ver, board_id;
  std::string text() const {
    return fw_ver + (board_id.empty() ? "" : " (board " + board_id + ")");
  }
};

Firmware firmware_of(const topology::Nic& nic) {
  if (!nic.pf.rdma) return {};
  return {nic.pf.rdma->fw_ver, nic.pf.rdma->board_id};
}

std::string split_text(const std::map<std::string, int>& count) {
  std::string out;
  for (const auto& [text, n] : count)
    out += (out.empty() ? "" : ", ") + text + " on " + std::to_string(n);
  return out;
}

class FirmwareCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    std::vector<Firmware> fw;
    std::map<std::string, int> count;
    int readable = 0;
    for (size_t k = 0; k < v.rails(); ++k) {
      fw.push_back(firmware_of(v.rail_nic(k)));
      if (fw.back().fw_ver.empty()) continue;
      ++count[fw.back().text()];
      ++readable;
    }
    const auto& named = v.settings.firmware_version;
    std::string majority;
    for (const auto& [text, n] : count)
      if (2 * n > readable) majority = text;
    for (size_t k = 0; k < v.rails(); ++k) {
      const std::string who = v.rail_name(k);
      const Firmware& f = fw[k];
      nlohmann::json e = {{"fw_ver", f.fw_ver}, {"board_id", f.board_id}};
      Finding finding;
      if (f.fw_ver.empty()) {
        finding = Finding::unknown_because(who, "firmware", "the driver shows no fw_ver");
      } else if (named) {
        e["expected"] = *named;
        finding = Finding::judged(
            who, "firmware", f.fw_ver == *named,
            "firmware " + f.text() +
                (f.fw_ver == *named ? ", as the config names" : ", the config names " + *named));
      } else if (majority.empty()) {
        e["rails"] = count;
        finding =
            Finding::judged(who, "firmware", false,
                            "firmware " + f.text() + ": the rails disagree with no majority (" +
                                split_text(count) + ")");
      } else {
        e["expected"] = majority;
        const bool same = f.text() == majority;
        finding =
            Finding::judged(who, "firmware", same,
                            "firmware " + f.text() +
                                (same ? ", as " + std::to_string(count[majority]) + " of " +
                                            std::to_string(readable) + " rails"
                                      : ", but " + std::to_string(count[majority]) + " of " +
                                            std::to_string(readable) + " rails run " + majority));
      }
      out.push_back(std::move(finding.with(std::move(e)).on_rail(static_cast<int>(k))));
    }
  }
};

}  // namespace

const NodeCheck& firmware_check() {
  static const FirmwareCheck c;
  return c;
}

}  // namespace railyard::validate
