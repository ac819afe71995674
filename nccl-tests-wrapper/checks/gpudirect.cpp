// gpudirect: nvidia_peermem (or the older nv_peer_mem) loaded on a GPU node, which GPUDirect
// RDMA needs without dma-buf; "warn" makes its absence a warning, "require" a failure.
#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

class GpuDirectCheck : public NodeCheck {
 public:
  void at_rest(const NodeView& v, std::vector<Finding>& out) const override {
    if (v.node.gpus.empty()) return;
    const bool peermem = v.sysfs.open_dir(v.sysfs.sys("module/nvidia_peermem")).has_value() ||
                         v.sysfs.open_dir(v.sysfs.sys("module/nv_peer_mem")).has_value();
    Finding f = Finding::judged(
        "node", "gpudirect", peermem,
        peermem ? "nvidia_peermem loaded"
                : "nvidia_peermem not loaded (GPUDirect RDMA needs it, or dma-buf)");
    if (!peermem && v.settings.gpu_direct == "warn") f.state = State::kWarn;
    out.push_back(f);
  }
};

}  // namespace

const NodeCheck& gpudirect_check() {
  static const GpuDirectCheck c;
  return c;
}

}  // namespace railyard::validate
