// roce-gid: each RoCE rail has a RoCE v2 GID (NCCL's default; none while the netdev is down or
// has no address).
#include <algorithm>

#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

class RoceGidCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    for (size_t k = 0; k < v.rails(); ++k) {
      const topology::RdmaPort* port = v.rail_nic(k).port();
      if (!port || port->link_layer != "Ethernet") continue;
      const bool v2 = std::any_of(port->gids.begin(), port->gids.end(),
                                  [](const topology::Gid& g) { return g.type == "RoCE v2"; });
      out.push_back(Finding::judged(v.rail_name(k), "roce-gid", v2,
                                    v2 ? "RoCE v2 GID present"
                                       : "no RoCE v2 GID (is the netdev up with an address?)")
                        .on_rail(static_cast<int>(k)));
    }
  }
};

}  // namespace

const NodeCheck& roce_gid_check() {
  static const RoceGidCheck c;
  return c;
}

}  // namespace railyard::validate
