// rate: each rail's port at the link rate the config expects (a cable that trained at a lower
// speed, a port run at 2X).
#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

class RateCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    const double expected = v.settings.expected_rate_gbps.value_or(0);
    for (size_t k = 0; k < v.rails(); ++k) {
      const topology::RdmaPort* port = v.rail_nic(k).port();
      out.push_back(Finding::judged(v.rail_name(k), "rate",
                                    port && port->rate_gbps && *port->rate_gbps >= expected,
                                    (port ? port->rate : std::string("no port")) + ", expected " +
                                        short_number(expected) + " Gb/s")
                        .on_rail(static_cast<int>(k)));
    }
  }
};

}  // namespace

const NodeCheck& rate_check() {
  static const RateCheck c;
  return c;
}

}  // namespace railyard::validate
