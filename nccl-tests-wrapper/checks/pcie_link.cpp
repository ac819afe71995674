// pcie: each rail NIC's PCIe link at the speed and width it can do.
#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

class PcieLinkCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    for (size_t k = 0; k < v.rails(); ++k) {
      const auto& link = v.rail_nic(k).pf.pci.link;
      out.push_back(
          Finding::judged(v.rail_name(k), "pcie", !link.degraded(), "PCIe " + link.to_string())
              .on_rail(static_cast<int>(k)));
    }
  }
};

}  // namespace

const NodeCheck& pcie_link_check() {
  static const PcieLinkCheck c;
  return c;
}

}  // namespace railyard::validate
