#include "deviceplugin/allocate.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "common/atomic_file.h"

namespace railyard::deviceplugin {
namespace {

namespace topo = railyard::topology;
using nlohmann::json;

constexpr const char* kRdmaCm = "/dev/infiniband/rdma_cm";

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string devinfo_name(const std::string& resource, const std::string& id) {
  auto flat = [](std::string s) {
    std::replace(s.begin(), s.end(), '/', '-');
    return s;
  };
  return flat(resource) + "-" + flat(id) + "-device.json";
}

}  // namespace

ContainerAllocation build_allocation(const Pool& pool, const topo::Node& node, const Config& config,
                                     const std::vector<std::string>& ids) {
  if (ids.empty()) throw AllocateError(pool.resource + ": no device IDs in the request");
  std::vector<const PoolDevice*> devs;
  std::set<std::string> seen;
  for (const auto& id : ids) {
    const PoolDevice* d = pool.find(id);
    if (!d) throw AllocateError(pool.resource + ": unknown device ID '" + id + "'");
    if (!seen.insert(id).second)
      throw AllocateError(pool.resource + ": device ID '" + id + "' is named twice");
    devs.push_back(d);
  }
  // Rail order: NCCL_IB_HCA and NVIDIA_VISIBLE_DEVICES then list rail k's NIC and GPU together.
  std::stable_sort(devs.begin(), devs.end(),
                   [](const PoolDevice* a, const PoolDevice* b) { return a->rail < b->rail; });

  ContainerAllocation out;
  std::vector<std::string> pci, hcas, gpus;
  json info = json::object();
  bool any_rdma = false;
  for (const PoolDevice* d : devs) {
    const auto& fn = node.function(d->fn);
    pci.push_back(d->id);
    json entry = {{"generic", {{"deviceID", d->id}}}};
    json devinfo = {{"type", "pci"}, {"version", "1.1.0"}, {"pci", {{"pci-address", d->id}}}};
    if (d->fn.vf >= 0)
      devinfo["pci"]["pf-pci-address"] =
          node.nics[static_cast<size_t>(d->fn.nic)].pf.pci.address.to_string();
    if (fn.rdma) {
      any_rdma = true;
      const int port = fn.rdma->ports.empty() ? 1 : fn.rdma->ports.front().number;
      hcas.push_back(fn.rdma->name + ":" + std::to_string(port));
      json rdma = {{"rdma_dev", fn.rdma->name}};
      if (pool.rdma_cm) rdma["rdma_cm"] = kRdmaCm;
      if (!fn.rdma->uverbs.empty()) {
        const std::string uverbs = "/dev/infiniband/" + fn.rdma->uverbs;
        out.devices.push_back({uverbs});
        rdma["uverbs"] = uverbs;
      }
      entry["rdma"] = rdma;
      devinfo["pci"]["rdma-device"] = fn.rdma->name;
    }
    info[d->id] = entry;
    out.devinfo.push_back({devinfo_name(pool.resource, d->id), devinfo.dump()});
    if (d->gpu >= 0) {
      gpus.push_back(std::to_string(node.gpus[static_cast<size_t>(d->gpu)].index));
      if (config.gpu_devices == GpuDevices::kNodes)
        out.devices.push_back({"/dev/nvidia" + std::to_string(d->gpu_minor)});
      else if (config.gpu_devices == GpuDevices::kCdi)
        out.cdi_devices.push_back(config.cdi_kind + "=" + gpus.back());
    }
  }
  if (any_rdma && pool.rdma_cm) out.devices.push_back({kRdmaCm});
  if (!gpus.empty() && config.gpu_devices == GpuDevices::kNodes)
    for (const char* ctl : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"})
      out.devices.push_back({ctl});

  const std::string env = pcidevice_env_name(pool.resource);
  out.envs[env] = join(pci, ",");
  out.envs[env + "_INFO"] = info.dump();
  // "=" makes NCCL match the names exactly: mlx5_1 must not also select mlx5_10.
  if (pool.nccl_ib_hca && !hcas.empty()) out.envs["NCCL_IB_HCA"] = "=" + join(hcas, ",");
  if (!gpus.empty()) out.envs["NVIDIA_VISIBLE_DEVICES"] = join(gpus, ",");
  return out;
}

// No fsync: the directory is a tmpfs (/var/run) on nodes; the rename alone keeps readers from
// ever seeing half a file, which is what Multus needs.
void write_devinfo(const std::filesystem::path& dir, const std::vector<DevInfoFile>& files) {
  for (const auto& f : files) write_file_atomically(dir / f.name, f.content, 0444);
}

json to_json(const ContainerAllocation& a) {
  json devices = json::array();
  for (const auto& d : a.devices)
    devices.push_back(
        {{"container_path", d.path}, {"host_path", d.path}, {"permissions", d.permissions}});
  json devinfo = json::object();
  for (const auto& f : a.devinfo) devinfo[f.name] = json::parse(f.content);
  return {{"envs", a.envs},
          {"devices", devices},
          {"cdi_devices", a.cdi_devices},
          {"devinfo_files", devinfo}};
}

}  // namespace railyard::deviceplugin
