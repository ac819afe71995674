// path: how far each GPU sits from its rail NIC (PIX, PXB, ... at most maxPathClass), and with
// pcieAcs, whether ACS on the bridges between them sends their traffic through the root complex.
#include "nccl-tests-wrapper/checks/check.h"
#include "nccl-tests-wrapper/checks/pcie_acs.h"

namespace railyard::validate {
namespace topo = railyard::topology;
namespace {

class PathCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    const auto max_path =
        topo::parse_path_class(v.settings.max_path_class).value_or(topo::PathClass::kSYS);
    for (size_t k = 0; k < v.rails(); ++k) {
      const topo::Nic& nic = v.rail_nic(k);
      const std::string who = v.rail_name(k);
      for (const auto& b : v.node.bundles) {
        if (b.rail != static_cast<int>(k)) continue;
        const std::string gpu = "GPU" + std::to_string(b.gpu);
        out.push_back(Finding::judged(who, "path", b.path <= max_path,
                                      gpu + " <-> NIC is " + std::string(topo::to_string(b.path)) +
                                          ", at most " + v.settings.max_path_class)
                          .on_rail(static_cast<int>(k)));
        if (!v.settings.pcie_acs) continue;
        for (auto& f : judge_bundle_path(v.sysfs, who, gpu + " <-> " + nic.pf.rdma_name(),
                                         v.node.gpus[static_cast<size_t>(b.gpu)].pci, nic.pf.pci))
          out.push_back(std::move(f.on_rail(static_cast<int>(k))));
      }
    }
  }
};

}  // namespace

const NodeCheck& path_check() {
  static const PathCheck c;
  return c;
}

}  // namespace railyard::validate
