#include "topology/discover/discover.h"

#include <algorithm>

#include "topology/bundles/bundles.h"
#include "topology/sysfs/parse.h"

namespace railyard::topology {
namespace {

constexpr uint16_t kNvidiaVendor = 0x10de;
constexpr uint16_t kMellanoxVendor = 0x15b3;

bool is_gpu_class(uint32_t cls) {
  return (cls >> 8) == 0x0300 || (cls >> 8) == 0x0302;
}
bool is_nic_class(uint32_t cls) {
  return (cls >> 8) == 0x0200 || (cls >> 8) == 0x0207;
}

// VFs need only their netdev names: the CNI reads a VF's live state over netlink.
std::vector<NetDevice> read_netdevs(const Dir& pci_dir, bool details) {
  std::vector<NetDevice> out;
  for (const auto& name : pci_dir.list("net")) {
    NetDevice nd;
    nd.name = name;
    if (details) {
      const std::string base = "net/" + name + "/";
      if (Attr a = pci_dir.read(base + "address"); a.ok()) nd.mac = a.value;
      if (Attr a = pci_dir.read(base + "mtu"); a.ok())
        if (auto v = parse_int(a.value)) nd.mtu = static_cast<int>(*v);
      if (Attr a = pci_dir.read(base + "operstate"); a.ok()) nd.operstate = a.value;
    }
    out.push_back(std::move(nd));
  }
  return out;
}

// rxe, siw: a software RDMA device built on one of the function's netdevs, with no PCI parent.
std::string software_rdma_on(const Sysfs& sysfs, const Dir& pci_dir) {
  for (const auto& nd : pci_dir.list("net"))
    if (auto name = rdma_device_of_netdev(sysfs, nd); !name.empty()) return name;
  return "";
}

// A PF when `pf` is null, else one of its VFs (`sibling`: an earlier VF of the same PF).
// `software_rdma`: a PF's rxe/siw device, when it has no RDMA device of its own.
std::optional<NicFunction> read_function(const Sysfs& sysfs, const Dir& dir, const PciDevice* pf,
                                         const PciDevice* sibling, bool ports, bool gids,
                                         Diagnostics& diag, const std::string& software_rdma = "") {
  auto pci =
      pf ? read_vf_device(sysfs, dir, *pf, sibling, diag) : read_pci_device(sysfs, dir, diag);
  if (!pci) return std::nullopt;
  NicFunction fn;
  fn.pci = std::move(*pci);
  fn.netdevs = read_netdevs(dir, pf == nullptr);
  auto rdma = read_rdma_devices(sysfs, dir, ports, gids, diag);
  if (rdma.empty() && !software_rdma.empty())
    if (auto parent = rdma_parent_dir(sysfs, software_rdma))
      for (auto& d : read_rdma_devices(sysfs, *parent, ports, gids, diag))
        if (d.name == software_rdma) {
          d.software = true;
          rdma.push_back(std::move(d));
        }
  if (rdma.size() > 1)
    diag.warn(sysfs.display(dir / "infiniband"),
              "several RDMA devices on one function; using " + rdma.front().name);
  if (!rdma.empty()) fn.rdma = std::move(rdma.front());
  return fn;
}

std::optional<int> read_count(const Sysfs& sysfs, const Dir& dir, const std::string& rel,
                              Diagnostics& diag) {
  Attr a = dir.read(rel);
  if (a.status == Attr::Status::kMissing) return std::nullopt;
  auto v = a.ok() ? parse_int(a.value) : std::nullopt;
  if (!v || *v < 0) {
    diag.error(sysfs.display(dir / rel),
               a.ok() ? "garbage value '" + a.value + "'" : "unreadable: " + a.value);
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

void read_vfs(const Sysfs& sysfs, const Dir& pf_dir, const DiscoverOptions& opts, Nic& nic,
              Diagnostics& diag) {
  nic.total_vfs = read_count(sysfs, pf_dir, "sriov_totalvfs", diag).value_or(0);
  const std::optional<int> num_vfs = read_count(sysfs, pf_dir, "sriov_numvfs", diag);
  nic.num_vfs = num_vfs.value_or(0);
  std::vector<std::pair<int, std::string>> links;
  for (const auto& name : pf_dir.list(".")) {
    if (name.rfind("virtfn", 0) != 0) continue;
    if (auto n = parse_int(std::string_view(name).substr(6))) links.emplace_back(*n, name);
  }
  std::sort(links.begin(), links.end());
  for (const auto& [n, name] : links) {
    auto target = pf_dir.link_target(sysfs, name);
    auto vf_dir = target ? sysfs.open_dir(*target) : std::nullopt;
    if (!vf_dir) {
      diag.error(sysfs.display(pf_dir / name), "dangling symlink: the VF is gone");
      continue;
    }
    const PciDevice* sibling = nic.vfs.empty() ? nullptr : &nic.vfs.front().pci;
    if (auto vf = read_function(sysfs, *vf_dir, &nic.pf.pci, sibling, opts.vf_ports, false, diag)) {
      vf->vf_number = n;
      nic.vfs.push_back(std::move(*vf));
    }
  }
  if (num_vfs && static_cast<int>(links.size()) != *num_vfs)
    diag.warn(sysfs.display(pf_dir / "sriov_numvfs"),
              "says " + std::to_string(*num_vfs) + " VFs but " + std::to_string(links.size()) +
                  " virtfn links exist");
}

}  // namespace

Node discover_devices(const Sysfs& sysfs, const DiscoverOptions& opts) {
  Node node;
  Diagnostics& diag = node.diagnostics;
  const fs::path devices = sysfs.sys("bus/pci/devices");
  auto bus = sysfs.open_dir(devices);
  if (!bus) {
    diag.warn(sysfs.display(devices), "no PCI bus in sysfs");
    return node;
  }
  // VFs are read through their PF's virtfnN links, so that they land under it; here they are
  // only checked for a PF that is gone, once every PF is read.
  std::vector<std::string> orphan_candidates;
  for (const auto& name : bus->list(".")) {
    if (bus->link_name(name + "/physfn")) {
      orphan_candidates.push_back(name);
      continue;
    }
    // The class through the bus link first: bridges and other devices are skipped without
    // resolving their path. Anything unreadable goes the long way, for its diagnostic.
    // A class read well is kept, not read again below.
    std::optional<uint32_t> cls;
    if (Attr c = bus->read(name + "/class"); c.ok())
      if (auto v = parse_hex(c.value); v && *v <= 0xffffff) {
        if (!is_nic_class(*v) && !(opts.gpus && is_gpu_class(*v))) continue;
        cls = v;
      }
    auto target = bus->link_target(sysfs, name);
    auto dir = target ? sysfs.open_dir(*target) : std::nullopt;
    if (!dir) {
      diag.error(sysfs.display(devices / name), "dangling symlink");
      continue;
    }
    if (!cls) cls = read_hex(sysfs, *dir, "class", diag, 0xffffff);
    if (!cls) continue;
    if (is_nic_class(*cls)) {
      const bool own_rdma = dir->exists("infiniband");
      const std::string software = own_rdma ? std::string() : software_rdma_on(sysfs, *dir);
      if (!own_rdma && software.empty()) {
        Attr vendor = dir->read("vendor");
        if (vendor.ok() && parse_hex(vendor.value) == kMellanoxVendor)
          diag.warn(sysfs.display(dir->path()),
                    "NVIDIA/Mellanox NIC without an RDMA device (is mlx5_ib loaded?)");
        continue;
      }
      auto pf = read_function(sysfs, *dir, nullptr, nullptr, true, opts.pf_gids, diag, software);
      if (!pf) continue;
      Nic nic;
      nic.pf = std::move(*pf);
      if (opts.vfs) read_vfs(sysfs, *dir, opts, nic, diag);
      node.nics.push_back(std::move(nic));
    } else if (opts.gpus && is_gpu_class(*cls)) {
      auto pci = read_pci_device(sysfs, *dir, diag);
      if (pci && pci->vendor == kNvidiaVendor) node.gpus.push_back(Gpu{0, std::move(*pci)});
    }
  }
  for (const auto& name : opts.vfs ? orphan_candidates : std::vector<std::string>{}) {
    auto addr = PciAddress::parse(name);
    if (addr && node.find_function(*addr)) continue;
    if (!bus->exists(name + "/physfn")) {
      auto target = bus->link_target(sysfs, name);
      diag.error(sysfs.display((target ? *target : devices / name) / "physfn"),
                 "dangling symlink: the VF's PF is gone");
    }
  }
  std::sort(node.gpus.begin(), node.gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.pci.address < b.pci.address; });
  for (size_t i = 0; i < node.gpus.size(); ++i) node.gpus[i].index = static_cast<int>(i);
  std::sort(node.nics.begin(), node.nics.end(),
            [](const Nic& a, const Nic& b) { return a.pf.pci.address < b.pf.pci.address; });
  return node;
}

Node discover(const Sysfs& sysfs, const RailsConfig& rails, const DiscoverOptions& opts) {
  Node node = discover_devices(sysfs, opts);
  node.rails = assign_rails(node.nics, rails);
  for (size_t k = 0; k < node.rails.size(); ++k)
    node.nics[static_cast<size_t>(node.rails[k])].rail = static_cast<int>(k);
  node.bundles = compute_bundles(node.gpus, node.nics, node.rails);
  return node;
}

}  // namespace railyard::topology
