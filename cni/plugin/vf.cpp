#include "cni/plugin/vf.h"

#include <arpa/inet.h>
#include <netlink/route/link/sriov.h>

#include "cni-protocol/error.h"

namespace railyard::cni {
namespace {

using VfPtr = std::unique_ptr<rtnl_link_vf, net::NlDeleter<rtnl_link_vf, rtnl_link_vf_put>>;

net::NlLink get_pf(const net::RouteSocket& sk, const std::string& pf) {
  rtnl_link* raw = nullptr;
  if (rtnl_link_get_kernel(sk.get(), 0, pf.c_str(), &raw) < 0)
    throw CniError(kInvalidConfig, "PF " + pf + " not found");
  return net::NlLink(raw);
}

void commit(const net::RouteSocket& sk, rtnl_link* pf_link, const std::string& pf, int vf,
            rtnl_link_vf* settings) {
  net::NlLink change(rtnl_link_alloc());
  rtnl_link_vf_add(change.get(), settings);
  if (int err = rtnl_link_change(sk.get(), pf_link, change.get(), 0); err < 0)
    throw CniError(kInvalidConfig, "PF " + pf + " refused the settings of VF " +
                                       std::to_string(vf) + ": " + nl_geterror(err));
}

}  // namespace

nlohmann::json apply_vf(const net::RouteSocket& sk, const std::string& pf, int vf,
                        const VfSettings& s) {
  net::NlLink pf_link = get_pf(sk, pf);
  uint32_t num = 0;
  if (rtnl_link_get_num_vf(pf_link.get(), &num) < 0 || static_cast<uint32_t>(vf) >= num)
    throw CniError(kInvalidConfig,
                   "PF " + pf + " reports no VF " + std::to_string(vf) +
                       " over netlink: cannot apply vlan/mac/spoofchk/trust/link_state/rate");
  VfPtr cur(rtnl_link_vf_get(pf_link.get(), static_cast<uint32_t>(vf)));
  nlohmann::json original = nlohmann::json::object();
  if (cur) {
    nl_addr* mac = nullptr;
    if (rtnl_link_vf_get_addr(cur.get(), &mac) == 0 && mac) {
      char buf[64];
      original["mac"] = nl_addr2str(mac, buf, sizeof buf);
    }
    uint32_t v = 0;
    if (rtnl_link_vf_get_spoofchk(cur.get(), &v) == 0) original["spoofchk"] = v != 0;
    if (rtnl_link_vf_get_trust(cur.get(), &v) == 0) original["trust"] = v != 0;
    if (rtnl_link_vf_get_linkstate(cur.get(), &v) == 0) original["linkstate"] = v;
    nl_vf_vlans_t* vlans = nullptr;
    if (rtnl_link_vf_get_vlans(cur.get(), &vlans) == 0 && vlans && vlans->size > 0)
      original["vlan"] =
          nlohmann::json::array({vlans->vlans[0].vf_vlan, vlans->vlans[0].vf_vlan_qos});
    nl_vf_rate rate{};
    rate.api = RTNL_LINK_VF_RATE_API_NEW;
    if (rtnl_link_vf_get_rate(cur.get(), &rate) == 0)
      original["rate"] = nlohmann::json::array({rate.min_tx_rate, rate.max_tx_rate});
  }
  VfPtr vfs(rtnl_link_vf_alloc());
  rtnl_link_vf_set_index(vfs.get(), static_cast<uint32_t>(vf));
  if (!s.mac.empty()) {
    nl_addr* a = nullptr;
    if (nl_addr_parse(s.mac.c_str(), AF_LLC, &a) == 0) {
      rtnl_link_vf_set_addr(vfs.get(), a);
      nl_addr_put(a);
    }
  }
  if (s.spoofchk) rtnl_link_vf_set_spoofchk(vfs.get(), *s.spoofchk ? 1 : 0);
  if (s.trust) rtnl_link_vf_set_trust(vfs.get(), *s.trust ? 1 : 0);
  if (!s.link_state.empty())
    rtnl_link_vf_set_linkstate(vfs.get(), s.link_state == "enable"    ? 1
                                          : s.link_state == "disable" ? 2
                                                                      : 0);
  if (s.min_tx_rate || s.max_tx_rate) {
    nl_vf_rate rate{};
    rate.api = RTNL_LINK_VF_RATE_API_NEW;
    rate.min_tx_rate = static_cast<uint32_t>(s.min_tx_rate.value_or(0));
    rate.max_tx_rate = static_cast<uint32_t>(s.max_tx_rate.value_or(0));
    rtnl_link_vf_set_rate(vfs.get(), &rate);
  }
  nl_vf_vlans_t* vlans = nullptr;
  if (s.vlan) {
    rtnl_link_vf_vlan_alloc(&vlans, 1);
    vlans->vlans[0].vf_vlan = static_cast<uint32_t>(*s.vlan);
    vlans->vlans[0].vf_vlan_qos = static_cast<uint32_t>(s.vlan_qos.value_or(0));
    vlans->vlans[0].vf_vlan_proto =
        htons(s.vlan_proto == "802.1ad" || s.vlan_proto == "802.1AD" ? 0x88a8 : 0x8100);
    rtnl_link_vf_set_vlans(vfs.get(), vlans);
  }
  try {
    commit(sk, pf_link.get(), pf, vf, vfs.get());
  } catch (...) {
    if (vlans) rtnl_link_vf_vlan_put(vlans);
    throw;
  }
  if (vlans) rtnl_link_vf_vlan_put(vlans);
  return original;
}

void restore_vf(const net::RouteSocket& sk, const std::string& pf, int vf,
                const nlohmann::json& original) {
  if (!original.is_object() || original.empty()) return;
  VfSettings s;
  if (original.contains("mac")) s.mac = original["mac"];
  if (original.contains("spoofchk")) s.spoofchk = original["spoofchk"].get<bool>();
  if (original.contains("trust")) s.trust = original["trust"].get<bool>();
  if (original.contains("linkstate")) {
    const int ls = original["linkstate"];
    s.link_state = ls == 1 ? "enable" : ls == 2 ? "disable" : "auto";
  }
  s.vlan = original.contains("vlan") ? original["vlan"][0].get<int>() : 0;
  s.vlan_qos = original.contains("vlan") ? original["vlan"][1].get<int>() : 0;
  if (original.contains("rate")) {
    s.min_tx_rate = original["rate"][0].get<int>();
    s.max_tx_rate = original["rate"][1].get<int>();
  }
  apply_vf(sk, pf, vf, s);
}

}  // namespace railyard::cni
