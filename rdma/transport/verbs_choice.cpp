#include "rdma/transport/verbs_choice.h"

#include <arpa/inet.h>

#include <array>
#include <cstdio>
#include <stdexcept>

namespace railyard::rdma {
namespace {

bool is_ipv4_mapped(const std::string& gid) {
  return gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0;
}
bool is_link_local(const std::string& gid) {
  return gid.rfind("fe80:", 0) == 0;
}

}  // namespace

std::string ipv4_mapped_gid(const std::string& ipv4) {
  in_addr a{};
  if (::inet_pton(AF_INET, ipv4.c_str(), &a) != 1)
    throw std::invalid_argument("'" + ipv4 + "' is not an IPv4 address");
  const auto* b = reinterpret_cast<const unsigned char*>(&a.s_addr);
  char out[64];
  std::snprintf(out, sizeof out, "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", b[0], b[1],
                b[2], b[3]);
  return out;
}

std::optional<GidChoice> choose_gid(const topology::RdmaPort& port, const std::string& rail_ipv4,
                                    int forced) {
  if (forced >= 0) {
    for (const auto& g : port.gids)
      if (g.index == forced)
        return GidChoice{g.index, g.gid, g.type, "NCCL_IB_GID_INDEX=" + std::to_string(forced)};
    return std::nullopt;
  }
  if (port.link_layer == "InfiniBand") {
    for (const auto& g : port.gids)
      if (g.index == 0) return GidChoice{0, g.gid, g.type, "InfiniBand port GID"};
    return std::nullopt;
  }
  std::string mine;
  try {
    if (!rail_ipv4.empty()) mine = ipv4_mapped_gid(rail_ipv4);
  } catch (const std::invalid_argument&) {
  }
  // Lower rank wins; ties go to the lower index, as the kernel lists them.
  auto rank = [&](const topology::Gid& g) {
    const int type = g.type == "RoCE v2" ? 0 : 4;
    if (!mine.empty() && g.gid == mine) return type + 0;
    if (is_ipv4_mapped(g.gid)) return type + 1;
    if (!is_link_local(g.gid)) return type + 2;
    return type + 3;
  };
  const topology::Gid* best = nullptr;
  for (const auto& g : port.gids)
    if (!best || rank(g) < rank(*best)) best = &g;
  if (!best) return std::nullopt;
  static const std::array<const char*, 4> what = {"the rail's own IPv4-mapped address",
                                                  "IPv4-mapped", "global IPv6", "link-local"};
  const std::string type = best->type.empty() ? "RoCE" : best->type;
  return GidChoice{best->index, best->gid, best->type,
                   type + ", " + what[static_cast<size_t>(rank(*best) % 4)]};
}

int roce_mtu_for_netdev(int netdev_mtu) {
  // IB transport headers (BTH, RETH, ...) and the RoCEv2 IP/UDP ones, as the kernel reserves.
  const int room = netdev_mtu - 96;
  for (int m : {4096, 2048, 1024, 512, 256})
    if (room >= m) return m;
  return 0;
}

int path_mtu(int local, int remote) {
  return std::min(local, remote);
}

std::optional<topology::RdmaPort> read_rdma_port(const topology::Sysfs& sysfs,
                                                 const std::string& device, int port) {
  auto dir = topology::rdma_parent_dir(sysfs, device);
  if (!dir) return std::nullopt;
  topology::Diagnostics diag;
  for (auto& d : topology::read_rdma_devices(sysfs, *dir, true, true, diag)) {
    if (d.name != device) continue;
    for (auto& p : d.ports)
      if (p.number == port) return p;
  }
  return std::nullopt;
}

RailPlan plan_rail(const topology::Sysfs& sysfs, const std::string& entry,
                   const std::string& rail_ipv4, int forced_gid_index) {
  RailPlan plan;
  plan.device = entry;
  if (const auto colon = entry.find(':'); colon != std::string::npos) {
    plan.device = entry.substr(0, colon);
    try {
      plan.port = std::stoi(entry.substr(colon + 1));
    } catch (const std::exception&) {
      throw std::runtime_error("'" + entry + "': the port after ':' is not a number");
    }
  }
  // A netdev names its RDMA device: "eth2" -> "mlx5_0" (its function's), or "rxe0" built on it.
  if (!sysfs.open_dir(sysfs.sys("class/infiniband/" + plan.device)))
    if (auto d = topology::rdma_device_of_netdev(sysfs, plan.device); !d.empty()) plan.device = d;
  if (!sysfs.open_dir(sysfs.sys("class/infiniband/" + plan.device)))
    throw std::runtime_error("'" + entry + "' is not an RDMA device, nor the netdev of one, in " +
                             sysfs.display(sysfs.sys("class/infiniband")) +
                             ": verbs rails are RDMA devices (mlx5_0, mlx5_0:1)");
  const auto port = read_rdma_port(sysfs, plan.device, plan.port);
  if (!port)
    throw std::runtime_error("RDMA device " + plan.device + " port " + std::to_string(plan.port) +
                             " is not in " + sysfs.display(sysfs.sys("class/infiniband")));
  plan.roce = port->link_layer == "Ethernet";
  const auto gid = choose_gid(*port, rail_ipv4, forced_gid_index);
  if (!gid)
    throw std::runtime_error(plan.device + ":" + std::to_string(plan.port) +
                             (forced_gid_index >= 0
                                  ? " has no GID at index " + std::to_string(forced_gid_index)
                                  : std::string(" has no usable GID (is the netdev up, with an "
                                                "address?)")));
  plan.gid = *gid;
  if (plan.roce) {
    for (const auto& g : port->gids) {
      if (g.index != gid->index || g.netdev.empty()) continue;
      if (auto d = sysfs.open_dir(sysfs.sys("class/net/" + g.netdev)))
        if (auto m = d->read("mtu"); m.ok()) plan.mtu = roce_mtu_for_netdev(std::stoi(m.value));
    }
  }
  return plan;
}

const char* reg_path_name(RegPath p) {
  switch (p) {
    case RegPath::kHost:
      return "host memory";
    case RegPath::kDmaBuf:
      return "GPUDirect RDMA (dma-buf)";
    case RegPath::kPeerMem:
      return "GPUDirect RDMA (nvidia-peermem)";
    case RegPath::kStaged:
      return "staged through pinned host memory";
  }
  return "?";
}

RegPath choose_registration(const RegFacts& f, std::string_view forced) {
  if (!f.device_memory) {
    if (!forced.empty() && forced != "host")
      throw std::invalid_argument("--gpudirect " + std::string(forced) +
                                  ": the buffers are in host memory");
    return RegPath::kHost;
  }
  if (forced == "dmabuf") {
    if (!f.dmabuf)
      throw std::invalid_argument(
          "--gpudirect dmabuf: this GPU, driver or rdma-core does not register dma-buf memory");
    return RegPath::kDmaBuf;
  }
  if (forced == "peermem") {
    if (!f.peermem)
      throw std::invalid_argument("--gpudirect peermem: nvidia_peermem is not loaded");
    return RegPath::kPeerMem;
  }
  if (forced == "staged") return RegPath::kStaged;
  if (!forced.empty())
    throw std::invalid_argument("--gpudirect " + std::string(forced) +
                                ": dmabuf, peermem or staged");
  if (f.dmabuf) return RegPath::kDmaBuf;
  if (f.peermem) return RegPath::kPeerMem;
  return RegPath::kStaged;
}

bool peermem_loaded(const std::filesystem::path& sysfs_root) {
  std::error_code ec;
  return std::filesystem::is_directory(sysfs_root / "sys/module/nvidia_peermem", ec) ||
         std::filesystem::is_directory(sysfs_root / "sys/module/nv_peer_mem", ec);
}

std::string peer_slots_problem(uint64_t peer_slots, uint64_t peer_slot_bytes, uint64_t our_slots,
                               uint64_t our_slot_bytes, const std::string& peer) {
  if (peer_slots == 0 || peer_slot_bytes == 0)
    return peer + " sent no receive slots: is it running --transport verbs?";
  if (peer_slot_bytes != our_slot_bytes || peer_slots != our_slots)
    return peer + " runs " + std::to_string(peer_slots) + " slots of " +
           std::to_string(peer_slot_bytes) + " bytes, this rank " + std::to_string(our_slots) +
           " of " + std::to_string(our_slot_bytes) + ": give every rank the same --slots and " +
           "--slot-size";
  return "";
}

}  // namespace railyard::rdma
