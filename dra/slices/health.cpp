#include "dra/slices/health.h"

namespace railyard::dra {

namespace dp = railyard::deviceplugin;
namespace topo = railyard::topology;

std::vector<dp::Pool> health_pools(const topo::Node& node) {
  dp::Pool nics{.resource = "nics"};
  for (size_t i = 0; i < node.nics.size(); ++i) {
    const auto& nic = node.nics[i];
    if (nic.rail < 0) continue;
    const int n = static_cast<int>(i);
    nics.devices.push_back({.id = nic.pf.pci.address.to_string(), .fn = {n, -1}, .rail = nic.rail});
    for (size_t v = 0; v < nic.vfs.size(); ++v)
      nics.devices.push_back({.id = nic.vfs[v].pci.address.to_string(),
                              .fn = {n, static_cast<int>(v)},
                              .rail = nic.rail});
  }
  dp::Pool gpus{.resource = "gpus"};
  for (size_t g = 0; g < node.gpus.size(); ++g)
    gpus.devices.push_back(
        {.id = node.gpus[g].pci.address.to_string(), .gpu = static_cast<int>(g)});
  return {nics, gpus};
}

Health check_health(const topo::Sysfs& sysfs, const topo::Node& node) {
  const auto pools = health_pools(node);
  const dp::HealthChecker checker(sysfs, node, pools);
  Health out;
  for (auto& [resource, devices] : checker.check())
    for (auto& [id, h] : devices) out.emplace(id, h);
  return out;
}

}  // namespace railyard::dra
