// roce-qos: each RoCE rail's priority lossless (PFC) and, with "ecn", ECN on for it.
#include "nccl-tests-wrapper/checks/roce_qos.h"

#include <linux/dcbnl.h>

#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

std::string priorities(uint8_t bits) {
  std::string out;
  for (int p = 0; p < 8; ++p)
    if (bits & (1u << p)) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out.empty() ? "none" : out;
}

const char* tsa_name(uint8_t tsa) {
  switch (tsa) {
    case IEEE_8021QAZ_TSA_STRICT:
      return "strict";
    case IEEE_8021QAZ_TSA_ETS:
      return "ETS";
    case IEEE_8021QAZ_TSA_VENDOR:
      return "vendor";
    default:
      return "other";
  }
}

}  // namespace

EcnState read_ecn(const topology::Sysfs& sysfs, const std::string& netdev, int priority) {
  EcnState e;
  const auto dir = sysfs.open_dir(sysfs.sys("class/net/" + netdev + "/ecn"));
  if (!dir) return e;
  auto one = [&](const char* role) -> std::optional<bool> {
    const auto a = dir->read(std::string(role) + "/enable/" + std::to_string(priority));
    if (!a.ok()) return std::nullopt;
    return a.value == "1";
  };
  e.np = one("roce_np");
  e.rp = one("roce_rp");
  return e;
}

Finding judge_roce_qos(const std::string& subject, const std::string& netdev,
                       const std::string& driver, const DcbState& dcb, const EcnState& ecn,
                       int priority, bool require_ecn) {
  const std::string p = std::to_string(priority);
  if (!dcb.answered)
    return Finding::unknown_because(subject, "roce-qos",
                                    "no DCB answer for " + netdev +
                                        (driver.empty() ? "" : " (" + driver + ")") + ": " +
                                        dcb.why);
  std::string bad, seen;
  auto fail = [&](const std::string& s) { bad += (bad.empty() ? "" : "; ") + s; };
  auto note = [&](const std::string& s) { seen += (seen.empty() ? "" : "; ") + s; };
  if (!dcb.pfc_enabled)
    fail("the driver reports no PFC configuration");
  else if (!(*dcb.pfc_enabled & (1u << priority)))
    fail("PFC off on priority " + p + " (on: " + priorities(*dcb.pfc_enabled) + ")");
  else
    note("PFC on priority " + p + " (on: " + priorities(*dcb.pfc_enabled) + ")");
  if (dcb.prio_tc) {
    const int tc = (*dcb.prio_tc)[static_cast<size_t>(priority)] & 7;
    const uint8_t tsa = (*dcb.tc_tsa)[static_cast<size_t>(tc)];
    const int bw = (*dcb.tc_tx_bw)[static_cast<size_t>(tc)];
    const std::string what =
        "priority " + p + " -> TC " + std::to_string(tc) + " (" + tsa_name(tsa) +
        (tsa == IEEE_8021QAZ_TSA_ETS ? " " + std::to_string(bw) + "%" : std::string()) + ")";
    if (tsa == IEEE_8021QAZ_TSA_ETS && bw == 0)
      fail(what + ": no ETS bandwidth");
    else
      note(what);
  }
  int dscp = 0, dscp_here = 0;
  for (const auto& a : dcb.apps)
    if (a.selector == IEEE_8021QAZ_APP_SEL_DSCP) {
      ++dscp;
      dscp_here += a.priority == priority;
    }
  if (dscp)
    note("trust DSCP (" + std::to_string(dscp_here) + " of " + std::to_string(dscp) +
         " DSCP values on priority " + p + ")");
  else
    note("trust PCP");
  if (!ecn.np && !ecn.rp) {
    note("no ECN switches in sysfs");
  } else {
    std::string off;
    if (ecn.np && !*ecn.np) off += "roce_np";
    if (ecn.rp && !*ecn.rp) off += (off.empty() ? "" : " and ") + std::string("roce_rp");
    if (off.empty())
      note("ECN on priority " + p);
    else if (require_ecn)
      fail("ECN off on priority " + p + " (" + off + ")");
    else
      note("ECN off on priority " + p + " (" + off + ")");
  }
  nlohmann::json e = {{"priority", priority}, {"dscp_entries", dscp}};
  if (dcb.pfc_enabled) e["pfc_enabled"] = priorities(*dcb.pfc_enabled);
  if (dcb.prio_tc) {
    const int tc = (*dcb.prio_tc)[static_cast<size_t>(priority)] & 7;
    e["tc"] = tc;
    e["tsa"] = tsa_name((*dcb.tc_tsa)[static_cast<size_t>(tc)]);
    e["ets_bandwidth"] = (*dcb.tc_tx_bw)[static_cast<size_t>(tc)];
  }
  if (ecn.np) e["ecn_np"] = *ecn.np;
  if (ecn.rp) e["ecn_rp"] = *ecn.rp;
  return Finding::judged(subject, "roce-qos", bad.empty(), bad.empty() ? seen : bad).with(e);
}

namespace {

class RoceQosCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    for (size_t k = 0; k < v.rails(); ++k) {
      const topology::Nic& nic = v.rail_nic(k);
      const topology::RdmaPort* port = nic.port();
      if (!port || port->link_layer != "Ethernet") continue;
      const std::string netdev = nic.pf.netdev_name();
      const int prio = v.settings.roce_priority;
      out.push_back(judge_roce_qos(v.rail_name(k), netdev, nic.pf.pci.driver, query_dcb(netdev),
                                   read_ecn(v.sysfs, netdev, prio), prio, v.settings.require_ecn)
                        .on_rail(static_cast<int>(k)));
    }
  }
};

}  // namespace

const NodeCheck& roce_qos_check() {
  static const RoceQosCheck c;
  return c;
}

}  // namespace railyard::validate
