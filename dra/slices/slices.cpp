#include "dra/slices/slices.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "kube/railyard_names.h"
#include "topology/model/path.h"

namespace railyard::dra {

std::string_view to_string(DeviceType t) {
  switch (t) {
    case DeviceType::kNic:
      return "nic";
    case DeviceType::kVf:
      return "vf";
    case DeviceType::kGpu:
      return "gpu";
  }
  return "?";
}

namespace {

namespace topo = railyard::topology;
namespace attr = kube::attr;
using nlohmann::json;

// resource.k8s.io/v1 DeviceAttribute: exactly one typed field.
json str(const std::string& v) {
  return {{"string", v}};
}
json integer(int64_t v) {
  return {{"int", v}};
}
json boolean(bool v) {
  return {{"bool", v}};
}

std::string hex4(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v);
  return buf;
}

// "gpu-0000-18-00-0": the PCI address survives reboots and rail reordering, so a claim's
// allocation result still names the same hardware after the driver restarts.
std::string device_name(std::string_view prefix, const topo::PciAddress& a) {
  std::string out(prefix);
  out += '-';
  for (char c : a.to_string()) out += (c == ':' || c == '.') ? '-' : c;
  return out;
}

// A quantity in bits/s: "400G", or "2500M" for the rates that are not whole Gb/s (1X SDR).
std::string bits_per_second(double gbps) {
  const long long mbps = std::llround(gbps * 1000);
  return mbps % 1000 == 0 ? std::to_string(mbps / 1000) + "G" : std::to_string(mbps) + "M";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Attributes every PCI device carries: the standard three (k8s.io/dynamic-resource-allocation
// deviceattribute: pcieRoot, pciBusID, numaNode), then where it hangs below its root complex.
void add_pci(json& a, const topo::PciDevice& pci) {
  if (!pci.host_bridge.empty()) a[attr::kPcieRoot] = str(pci.host_bridge);
  a[attr::kPciBusId] = str(pci.address.to_string());
  // -1 (cloud VMs) is "the platform does not say": absent, so no claim matches on it.
  if (pci.numa_node >= 0) a[attr::kNumaNode] = integer(pci.numa_node);
  const auto up = topo::switch_upstream_ports(pci);
  if (!up.empty()) {
    // Nearest switch: devices that share it are PIX. Top switch: a whole tree (DGX A100's GPU
    // pair and NIC pair under one top switch, PXB), which pcieRoot is too coarse to tell.
    a[attr::kPcieSwitch] = str(up.back().to_string());
    a[attr::kPcieTopSwitch] = str(up.front().to_string());
  }
  a[attr::kPciVendorId] = str(hex4(pci.vendor));
  a[attr::kPciDeviceId] = str(hex4(pci.device));
}

void set_health(Device& d, const Health& health) {
  if (auto it = health.find(d.pci); it != health.end()) {
    d.healthy = it->second.healthy;
    d.reason = it->second.reason;
    d.fault = it->second.fault;
  }
  d.attributes[attr::kHealthy] = boolean(d.healthy);
}

Device nic_device(const topo::Node& node, int n, int vf, const Health& health) {
  const auto& nic = node.nics[static_cast<size_t>(n)];
  const auto& fn = vf < 0 ? nic.pf : nic.vfs[static_cast<size_t>(vf)];
  Device d{.name = device_name(vf < 0 ? "nic" : "vf", fn.pci.address),
           .type = vf < 0 ? DeviceType::kNic : DeviceType::kVf,
           .pci = fn.pci.address.to_string(),
           .fn = {n, vf}};
  auto& a = d.attributes;
  a[attr::kType] = str(std::string(to_string(d.type)));
  add_pci(a, fn.pci);
  d.rail = nic.rail;
  a[attr::kRail] = integer(nic.rail);
  if (!fn.rdma_name().empty()) a[attr::kRdmaDevice] = str(fn.rdma_name());
  if (!fn.netdev_name().empty()) a[attr::kIfName] = str(fn.netdev_name());
  if (!nic.link_layer().empty()) a[attr::kLinkLayer] = str(lower(nic.link_layer()));
  if (vf >= 0) a[attr::kVf] = integer(fn.vf_number);
  // A VF sends through its PF's port: the rail's link is what it shares.
  if (const auto* port = nic.port(); port && port->rate_gbps)
    d.capacity[attr::kLinkSpeed] = {{"value", bits_per_second(*port->rate_gbps)}};
  set_health(d, health);
  return d;
}

Device gpu_device(const topo::Node& node, int g, const Health& health) {
  const auto& gpu = node.gpus[static_cast<size_t>(g)];
  Device d{.name = device_name("gpu", gpu.pci.address),
           .type = DeviceType::kGpu,
           .pci = gpu.pci.address.to_string(),
           .gpu = g};
  auto& a = d.attributes;
  a[attr::kType] = str(std::string(to_string(d.type)));
  add_pci(a, gpu.pci);
  a[attr::kIndex] = integer(gpu.index);
  // The GPU's bundle: its rail lets a claim pair it with that rail's NIC or VF
  // (matchAttribute railyard.io/rail); the path class says how close they are.
  for (const auto& b : node.bundles) {
    if (b.gpu != g) continue;
    d.rail = b.rail;
    a[attr::kRail] = integer(b.rail);
    a[attr::kPathClass] = str(std::string(topo::to_string(b.path)));
    const auto& rdma = node.nics[static_cast<size_t>(b.nic)].pf.rdma_name();
    if (!rdma.empty()) a[attr::kBundleRdmaDevice] = str(rdma);
    break;
  }
  set_health(d, health);
  return d;
}

std::string slice_name(const std::string& node, size_t i) {
  return node + "-" + kDriverName + "-" + std::to_string(i);
}

json taints_of(const Device& d, TaintEffect effect) {
  json t = {
      {"key", kRailDownTaint}, {"value", taint_value(d.fault)}, {"effect", to_string(effect)}};
  if (!d.unhealthy_since.empty()) t["timeAdded"] = d.unhealthy_since;
  return json::array({std::move(t)});
}

}  // namespace

std::string_view to_string(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
    case TaintEffect::kNone:
      return "None";
  }
  return "?";
}

std::string_view taint_value(deviceplugin::Fault f) {
  switch (f) {
    case deviceplugin::Fault::kGone:
      return "gone";
    case deviceplugin::Fault::kNoCarrier:
      return "no-carrier";
    case deviceplugin::Fault::kPortDown:
    case deviceplugin::Fault::kNone:
      break;
  }
  return "port-down";
}

json Device::to_json() const {
  json out = {{"name", name}, {"attributes", attributes}};
  if (!capacity.empty()) out["capacity"] = capacity;
  return out;
}

std::vector<Device> build_devices(const topo::Node& node, const Health& health) {
  std::vector<Device> out;
  for (size_t g = 0; g < node.gpus.size(); ++g)
    out.push_back(gpu_device(node, static_cast<int>(g), health));
  for (int n : node.rails) {
    out.push_back(nic_device(node, n, -1, health));
    const auto& vfs = node.nics[static_cast<size_t>(n)].vfs;
    for (size_t v = 0; v < vfs.size(); ++v)
      out.push_back(nic_device(node, n, static_cast<int>(v), health));
  }
  return out;
}

std::vector<json> build_slices(const std::vector<Device>& devices, const SliceOptions& options) {
  std::vector<const Device*> kept;
  for (const auto& d : devices)
    if (d.healthy || options.unhealthy != Unhealthy::kDrop) kept.push_back(&d);
  // Tainting, every slice keeps to the tainted limit, healthy or not: a device going down
  // does not reshuffle the pool's slices.
  const bool tainting = options.unhealthy == Unhealthy::kTaint;
  const size_t per = std::clamp<size_t>(
      options.max_devices, 1, tainting ? kMaxTaintedDevicesPerSlice : kMaxDevicesPerSlice);
  const size_t count = std::max<size_t>(1, (kept.size() + per - 1) / per);
  std::vector<json> out;
  for (size_t i = 0; i < count; ++i) {
    json devs = json::array();
    for (size_t k = i * per; k < std::min(kept.size(), (i + 1) * per); ++k) {
      json dev = kept[k]->to_json();
      if (tainting && !kept[k]->healthy) dev["taints"] = taints_of(*kept[k], options.effect);
      devs.push_back(std::move(dev));
    }
    json meta;
    const std::string name = slice_name(options.node_name, i);
    // Past an object name's 253 characters only the API server can make one up.
    if (name.size() <= 253)
      meta["name"] = name;
    else
      meta["generateName"] = std::string(kDriverName) + "-";
    out.push_back({{"apiVersion", "resource.k8s.io/v1"},
                   {"kind", "ResourceSlice"},
                   {"metadata", std::move(meta)},
                   {"spec",
                    {{"driver", kDriverName},
                     {"nodeName", options.node_name},
                     {"pool",
                      {{"name", options.node_name},
                       {"generation", options.generation},
                       {"resourceSliceCount", count}}},
                     {"devices", std::move(devs)}}}});
  }
  return out;
}

std::vector<json> node_slices(const topo::Node& node, const Health& health,
                              const SliceOptions& options) {
  return build_slices(build_devices(node, health), options);
}

}  // namespace railyard::dra
