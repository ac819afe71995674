// mtu: each rail netdev's MTU (at least minMtu) and the IB MTU its port runs (the fabric's).
#include "nccl-tests-wrapper/checks/mtu.h"

#include <infiniband/verbs.h>

#include "nccl-tests-wrapper/checks/check.h"
#include "rdma/transport/verbs_choice.h"

namespace railyard::validate {

std::optional<int> query_active_mtu(const std::string& rdma_device, int port) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list) return std::nullopt;
  std::optional<int> mtu;
  for (int i = 0; i < n && !mtu; ++i) {
    if (rdma_device != ibv_get_device_name(list[i])) continue;
    if (ibv_context* ctx = ibv_open_device(list[i])) {
      ibv_port_attr attr{};
      if (ibv_query_port(ctx, static_cast<uint8_t>(port), &attr) == 0)
        mtu = 128 << static_cast<int>(attr.active_mtu);  // IBV_MTU_256 is 1
      ibv_close_device(ctx);
    }
  }
  ibv_free_device_list(list);
  return mtu;
}

Finding judge_mtu(const std::string& subject, const MtuFacts& f, int min_netdev_mtu,
                  int fabric_mtu) {
  std::string bad;
  auto fail = [&](const std::string& s) { bad += (bad.empty() ? "" : "; ") + s; };
  std::string facts = "netdev MTU " + std::to_string(f.netdev_mtu);
  std::optional<int> active = f.active_mtu;
  std::string source = "active";
  if (!active && f.roce && f.netdev_mtu > 0) {
    active = rdma::roce_mtu_for_netdev(f.netdev_mtu);
    source = "derived from the netdev";
  }
  facts += active ? ", port MTU " + std::to_string(*active) + " (" + source + ")"
                  : ", port MTU unknown (no verbs device to ask)";
  if (fabric_mtu) facts += ", fabric " + std::to_string(fabric_mtu);
  if (min_netdev_mtu && f.netdev_mtu < min_netdev_mtu)
    fail("netdev MTU " + std::to_string(f.netdev_mtu) + " below " + std::to_string(min_netdev_mtu));
  if (fabric_mtu && active && *active != fabric_mtu)
    fail("port MTU " + std::to_string(*active) + " is not the fabric's " +
         std::to_string(fabric_mtu) +
         (f.roce && *active < fabric_mtu ? " (the netdev MTU is too small for it)" : ""));
  const nlohmann::json e = {
      {"netdev_mtu", f.netdev_mtu},
      {"port_mtu", active ? nlohmann::json(*active) : nlohmann::json(nullptr)},
      {"port_mtu_source", active ? source : std::string("unknown")},
      {"fabric_mtu", fabric_mtu}};
  if (!bad.empty()) return Finding::judged(subject, "mtu", false, bad + " (" + facts + ")").with(e);
  if (fabric_mtu && !active) return Finding::unknown_because(subject, "mtu", facts).with(e);
  return Finding::judged(subject, "mtu", true, facts).with(e);
}

namespace {

class MtuCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    for (size_t k = 0; k < v.rails(); ++k) {
      const topology::Nic& nic = v.rail_nic(k);
      const topology::RdmaPort* port = nic.port();
      MtuFacts facts;
      facts.netdev_mtu = nic.pf.netdevs.empty() ? 0 : nic.pf.netdevs.front().mtu;
      facts.roce = port && port->link_layer == "Ethernet";
      // Only a live node's devices are the ones sysfs describes.
      if (port && v.sysfs.root() == "/")
        facts.active_mtu = query_active_mtu(nic.pf.rdma_name(), port->number);
      out.push_back(
          judge_mtu(v.rail_name(k), facts, v.settings.min_mtu.value_or(0), v.settings.fabric_mtu)
              .on_rail(static_cast<int>(k)));
    }
  }
};

}  // namespace

const NodeCheck& mtu_check() {
  static const MtuCheck c;
  return c;
}

}  // namespace railyard::validate
