#include "topology/discover/resolve.h"

#include "topology/discover/discover.h"

namespace railyard::topology {

std::optional<ResolvedFunction> resolve_function(const Sysfs& sysfs, const RailsConfig& rails,
                                                 const PciAddress& address) {
  const std::string name = address.to_string();
  const auto bus = sysfs.open_dir(sysfs.sys("bus/pci/devices"));
  const auto target = bus ? bus->link_target(sysfs, name) : std::nullopt;
  const auto dir = target ? sysfs.open_dir(*target) : std::nullopt;
  if (!dir) return std::nullopt;
  ResolvedFunction r;
  r.address = address;
  if (const auto nets = dir->list("net"); !nets.empty()) r.netdev = nets.front();

  const Node pfs =
      discover(sysfs, rails,
               DiscoverOptions{.vf_ports = false, .vfs = false, .pf_gids = false, .gpus = false});
  const Nic* nic = nullptr;
  if (auto ref = pfs.find_function(address)) {  // a PF
    nic = &pfs.nics[static_cast<size_t>(ref->nic)];
    r.rdma = nic->pf.rdma_name();
  } else if (const auto physfn = dir->link_target(sysfs, "physfn")) {  // a VF of an RDMA PF?
    const auto pf_address = PciAddress::parse(physfn->filename().string());
    const auto pf_ref = pf_address ? pfs.find_function(*pf_address) : std::nullopt;
    if (!pf_ref) return r;
    nic = &pfs.nics[static_cast<size_t>(pf_ref->nic)];
    if (const auto devs = dir->list("infiniband"); !devs.empty()) r.rdma = devs.front();
    const auto pf_dir = sysfs.open_dir(*physfn);
    for (const auto& entry : pf_dir ? pf_dir->list(".") : std::vector<std::string>{}) {
      if (entry.rfind("virtfn", 0) != 0) continue;
      if (pf_dir->link_name(entry) == name) {
        r.vf_number = std::stoi(entry.substr(6));
        break;
      }
    }
  } else {
    return r;
  }
  r.rdma_nic = true;
  r.rail = nic->rail;
  r.pf_rdma = nic->pf.rdma_name();
  r.pf_netdev = nic->pf.netdev_name();
  return r;
}

std::optional<ResolvedFunction> resolve_netdev(const Sysfs& sysfs, const RailsConfig& rails,
                                               const std::string& netdev) {
  // class/net/<netdev> -> .../devices/.../<PCI address>/net/<netdev>, or .../virtual/net/...
  const auto net = sysfs.open_dir(sysfs.sys("class/net"));
  const auto path = net ? net->link_target(sysfs, netdev) : std::nullopt;
  const auto address =
      path && path->parent_path().filename() == "net"
          ? PciAddress::parse(path->parent_path().parent_path().filename().string())
          : std::nullopt;
  if (!address) return std::nullopt;
  return resolve_function(sysfs, rails, *address);
}

}  // namespace railyard::topology
