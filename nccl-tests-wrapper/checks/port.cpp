// port: each rail's port ACTIVE.
#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

class PortCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    for (size_t k = 0; k < v.rails(); ++k) {
      const topology::RdmaPort* port = v.rail_nic(k).port();
      out.push_back(Finding::judged(v.rail_name(k), "port", port && port->active(),
                                    port ? "port " + std::to_string(port->number) + " " +
                                               port->state + " (" + port->phys_state + ")"
                                         : "no port")
                        .on_rail(static_cast<int>(k)));
    }
  }
};

}  // namespace

const NodeCheck& port_check() {
  static const PortCheck c;
  return c;
}

}  // namespace railyard::validate
