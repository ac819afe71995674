#include "dra/slices/prepare.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "deviceplugin/allocate.h"
#include "deviceplugin/pools.h"

namespace railyard::dra {
namespace {

namespace dp = railyard::deviceplugin;
using nlohmann::json;

std::string cdi_name(const std::string& claim_uid, const std::string& device) {
  return claim_uid + "-" + device;
}

std::vector<std::string> env_list(const std::map<std::string, std::string>& envs) {
  std::vector<std::string> out;
  for (const auto& [k, v] : envs) out.push_back(k + "=" + v);
  return out;
}

json device_nodes(const std::vector<dp::DeviceNode>& nodes) {
  json out = json::array();
  for (const auto& n : nodes) out.push_back({{"path", n.path}, {"permissions", n.permissions}});
  return out;
}

// RAILYARD_DEVICE_VF_0000_64_00_2=0000:64:00.2
std::string device_env(const Device& d) {
  std::string key = "RAILYARD_DEVICE_";
  for (char c : d.name) key += std::isalnum(static_cast<unsigned char>(c)) ? std::toupper(c) : '_';
  return key + "=" + d.pci;
}

}  // namespace

json PreparedClaim::to_json() const {
  json devs = json::array();
  for (const auto& d : devices)
    devs.push_back({{"request", d.request},
                    {"name", d.name},
                    {"type", d.type},
                    {"pci", d.pci},
                    {"rail", d.rail},
                    {"rdma", d.rdma},
                    {"cdiIDs", d.cdi_ids}});
  return {{"uid", uid},   {"namespace", ns}, {"name", name},
          {"pods", pods}, {"devices", devs}, {"cdiSpec", cdi_spec}};
}

PreparedClaim PreparedClaim::from_json(const json& j) {
  PreparedClaim c;
  c.uid = j.at("uid").get<std::string>();
  c.ns = j.at("namespace").get<std::string>();
  c.name = j.at("name").get<std::string>();
  c.pods = j.at("pods").get<std::vector<std::string>>();
  for (const auto& d : j.at("devices"))
    c.devices.push_back({d.at("request").get<std::string>(), d.at("name").get<std::string>(),
                         d.at("type").get<std::string>(), d.at("pci").get<std::string>(),
                         d.at("rail").get<int>(), d.at("rdma").get<std::string>(),
                         d.at("cdiIDs").get<std::vector<std::string>>()});
  c.cdi_spec = j.value("cdiSpec", json::object());
  return c;
}

PreparedClaim prepare_claim(const json& claim, const std::string& uid, const topology::Node& node,
                            const std::vector<Device>& devices, const PrepareOptions& options) {
  PreparedClaim out;
  const json& meta = claim.value("metadata", json::object());
  out.ns = meta.value("namespace", "");
  out.name = meta.value("name", "");
  out.uid = uid;
  if (meta.value("uid", "") != uid)
    throw PrepareError("claim " + out.ref() + " has UID " + meta.value("uid", "") + ", not the " +
                       uid + " asked for: it was deleted and made again");
  const json status = claim.value("status", json::object());
  if (!status.contains("allocation"))
    throw PrepareError("claim " + out.ref() + " is not allocated");
  for (const auto& r : status.value("reservedFor", json::array()))
    if (r.value("resource", "") == "pods" && !r.value("uid", "").empty())
      out.pods.push_back(r["uid"].get<std::string>());

  std::map<std::string, const Device*> by_name;
  for (const auto& d : devices) by_name[d.name] = &d;
  // The NICs go through the device plugin's Allocate, as one pool holding exactly them; the
  // GPUs are added per device below.
  dp::Pool nics{.resource = "railyard.io/rails", .kind = dp::PoolKind::kVf, .nccl_ib_hca = true};
  std::error_code ec;
  nics.rdma_cm = std::filesystem::exists(options.root / "sys/class/misc/rdma_cm", ec);
  std::vector<std::string> gpu_indices;
  json cdi_devices = json::array();
  const auto results =
      status["allocation"].value("devices", json::object()).value("results", json::array());
  for (const auto& r : results) {
    if (r.value("driver", "") != kDriverName) continue;
    const std::string dev = r.value("device", "");
    if (r.value("pool", "") != options.pool)
      throw PrepareError("claim " + out.ref() + ": device " + dev + " was allocated from pool " +
                         r.value("pool", "") + ", not this node's (" + options.pool + ")");
    const auto it = by_name.find(dev);
    if (it == by_name.end())
      throw PrepareError("claim " + out.ref() + ": device " + dev +
                         " is not on this node any more (gone, or unhealthy and withdrawn)");
    const Device& d = *it->second;
    PreparedDevice p{r.value("request", ""), d.name, std::string(to_string(d.type)), d.pci};
    p.cdi_ids.push_back(std::string(kCdiKind) + "=" + cdi_name(uid, d.name));
    // Every CDI device needs an edit: its name and address, whatever else it brings.
    json edits = {{"env", {device_env(d)}}};
    if (d.type == DeviceType::kGpu) {
      const auto& gpu = node.gpus[static_cast<size_t>(d.gpu)];
      gpu_indices.push_back(std::to_string(gpu.index));
      if (options.gpu_devices == dp::GpuDevices::kNodes)
        edits["deviceNodes"] =
            device_nodes({{"/dev/nvidia" + std::to_string(dp::gpu_minor(options.root, gpu))}});
      else if (options.gpu_devices == dp::GpuDevices::kCdi)
        p.cdi_ids.push_back(options.gpu_cdi_kind + "=" + std::to_string(gpu.index));
      p.rail = d.rail;
    } else {
      const auto& fn = node.function(d.fn);
      dp::PoolDevice pd{.id = d.pci, .fn = d.fn};
      pd.rail = node.nics[static_cast<size_t>(d.fn.nic)].rail;
      p.rail = pd.rail;
      if (fn.rdma) p.rdma = fn.rdma->name;
      nics.devices.push_back(pd);
      // The device's own node: a container given only this request still gets its uverbs.
      if (fn.rdma && !fn.rdma->uverbs.empty())
        edits["deviceNodes"] = device_nodes({{"/dev/infiniband/" + fn.rdma->uverbs}});
    }
    cdi_devices.push_back({{"name", cdi_name(uid, d.name)}, {"containerEdits", edits}});
    out.devices.push_back(std::move(p));
  }
  if (out.devices.empty())
    throw PrepareError("claim " + out.ref() + " has no device of " + kDriverName + " in pool " +
                       options.pool);

  // What the whole claim adds, once per container whatever subset of its devices it names: the
  // spec's own edits. NCCL_IB_HCA lists every NIC of the claim, rail by rail.
  json spec_edits = json::object();
  std::map<std::string, std::string> env;
  std::vector<dp::DeviceNode> shared_nodes;
  if (!nics.devices.empty()) {
    // Pool::find looks devices up by PCI address: the pool keeps them in that order.
    std::sort(nics.devices.begin(), nics.devices.end(),
              [](const dp::PoolDevice& a, const dp::PoolDevice& b) { return a.id < b.id; });
    std::vector<std::string> ids;
    for (const auto& d : nics.devices) ids.push_back(d.id);
    auto alloc = dp::build_allocation(nics, node, dp::Config{}, ids);
    env = alloc.envs;
    for (const auto& n : alloc.devices)
      if (n.path.rfind("/dev/infiniband/uverbs", 0) != 0) shared_nodes.push_back(n);
  }
  if (!gpu_indices.empty()) {
    std::string list;
    for (const auto& g : gpu_indices) list += (list.empty() ? "" : ",") + g;
    env["NVIDIA_VISIBLE_DEVICES"] = list;
    if (options.gpu_devices == dp::GpuDevices::kNodes)
      for (const char* ctl : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"})
        shared_nodes.push_back({ctl});
  }
  env["RAILYARD_CLAIM"] = out.ref();
  spec_edits["env"] = env_list(env);
  if (!shared_nodes.empty()) spec_edits["deviceNodes"] = device_nodes(shared_nodes);
  out.cdi_spec = {{"cdiVersion", "0.6.0"},
                  {"kind", kCdiKind},
                  {"devices", cdi_devices},
                  {"containerEdits", spec_edits}};
  return out;
}

}  // namespace railyard::dra
