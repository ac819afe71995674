#include "deviceplugin/pools.h"

#include <algorithm>
#include <fstream>
#include <map>

namespace railyard::deviceplugin {
namespace {

namespace topo = railyard::topology;

PoolDevice device_of(const topo::Node& node, int nic, int vf) {
  const auto& n = node.nics[static_cast<size_t>(nic)];
  const auto& fn = vf < 0 ? n.pf : n.vfs[static_cast<size_t>(vf)];
  return {
      .id = fn.pci.address.to_string(), .fn = {nic, vf}, .rail = n.rail, .numa = fn.pci.numa_node};
}

void add_bundles(const PoolConfig& pc, const topo::Selectors& sel, const topo::Node& node,
                 const std::filesystem::path& root, Pool& pool, std::vector<std::string>& warn) {
  for (const auto& b : node.bundles) {
    const auto& nic = node.nics[static_cast<size_t>(b.nic)];
    int vf = -1;
    if (pc.bundle_vf) {
      if (pc.bundle_vf_index >= static_cast<int>(nic.vfs.size())) {
        warn.push_back(pool.resource + ": " + nic.pf.rdma_name() + " has no VF " +
                       std::to_string(pc.bundle_vf_index) + "; GPU " + std::to_string(b.gpu) +
                       " is left out");
        continue;
      }
      vf = pc.bundle_vf_index;
    }
    if (!sel.matches(nic, vf < 0 ? nic.pf : nic.vfs[static_cast<size_t>(vf)])) continue;
    PoolDevice d = device_of(node, b.nic, vf);
    const auto& gpu = node.gpus[static_cast<size_t>(b.gpu)];
    d.gpu = b.gpu;
    d.gpu_minor = gpu_minor(root, gpu);
    d.path = b.path;
    // The GPU decides where the pod's memory should live.
    if (gpu.pci.numa_node >= 0) d.numa = gpu.pci.numa_node;
    pool.devices.push_back(d);
  }
}

void add_functions(const PoolConfig& pc, const topo::Selectors& sel, const topo::Node& node,
                   Pool& pool) {
  for (size_t i = 0; i < node.nics.size(); ++i) {
    const auto& nic = node.nics[i];
    if (pc.kind == PoolKind::kPf) {
      if (sel.matches(nic, nic.pf))
        pool.devices.push_back(device_of(node, static_cast<int>(i), -1));
      continue;
    }
    for (size_t v = 0; v < nic.vfs.size(); ++v)
      if (sel.matches(nic, nic.vfs[v]))
        pool.devices.push_back(device_of(node, static_cast<int>(i), static_cast<int>(v)));
  }
}

}  // namespace

const PoolDevice* Pool::find(const std::string& id) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), id,
                             [](const PoolDevice& d, const std::string& k) { return d.id < k; });
  return it != devices.end() && it->id == id ? &*it : nullptr;
}

PoolSet build_pools(const Config& config, const topo::Node& node,
                    const std::filesystem::path& root) {
  PoolSet out;
  std::error_code ec;
  const bool rdma_cm = std::filesystem::exists(root / "sys/class/misc/rdma_cm", ec);
  auto build = [&](const PoolConfig& pc, const std::string& resource, topo::Selectors sel) {
    Pool pool{.resource = resource,
              .kind = pc.kind,
              .nccl_ib_hca = pc.nccl_ib_hca.value_or(pc.kind == PoolKind::kBundle),
              .rdma_cm = rdma_cm};
    if (pc.kind == PoolKind::kBundle)
      add_bundles(pc, sel, node, root, pool, out.warnings);
    else
      add_functions(pc, sel, node, pool);
    std::sort(pool.devices.begin(), pool.devices.end(),
              [](const PoolDevice& a, const PoolDevice& b) { return a.id < b.id; });
    if (pool.devices.empty())
      out.warnings.push_back(resource + ": no device matches; the resource is not advertised");
    else
      out.pools.push_back(std::move(pool));
  };
  for (const auto& pc : config.pools) {
    if (!pc.per_rail) {
      build(pc, pc.name, pc.selectors);
      continue;
    }
    for (int k = 0; k < static_cast<int>(node.rails.size()); ++k) {
      const auto& wanted = pc.selectors.rails;
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), k) == wanted.end()) continue;
      topo::Selectors sel = pc.selectors;
      sel.rails = {k};
      build(pc, pc.name + std::to_string(k), sel);
    }
  }
  std::map<std::string, std::string> owner;
  for (const auto& p : out.pools)
    for (const auto& d : p.devices) {
      auto [it, fresh] = owner.emplace(d.id, p.resource);
      if (!fresh)
        throw ConfigError((config.source.empty() ? std::string("config") : config.source) + ": " +
                          d.id + " matches both " + it->second + " and " + p.resource +
                          "; selectors must keep pools apart");
    }
  return out;
}

int gpu_minor(const std::filesystem::path& root, const topo::Gpu& gpu) {
  std::ifstream in(root / "proc/driver/nvidia/gpus" / gpu.pci.address.to_string() / "information");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Device Minor:", 0) != 0) continue;
    try {
      return std::stoi(line.substr(13));
    } catch (const std::exception&) {
      break;
    }
  }
  return gpu.index;
}

}  // namespace railyard::deviceplugin
