// The decisions a verbs rail makes before it opens a device, as pure functions over what sysfs
// shows, so that they are tested on fixtures without hardware: which GID a RoCEv2 rail uses,
// which path MTU, and how GPU memory is registered (dma-buf, nvidia-peermem, or staged through
// host memory).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "topology/sysfs/rdma.h"

namespace railyard::rdma {

// "10.0.0.1" -> "0000:0000:0000:0000:0000:ffff:0a00:0001", as sysfs writes IPv4-mapped GIDs.
// Throws std::invalid_argument when the text is not an IPv4 address.
std::string ipv4_mapped_gid(const std::string& ipv4);

struct GidChoice {
  int index = 0;
  std::string gid, type;
  std::string why;  // for the run's header: "RoCE v2, IPv4-mapped 10.0.0.1"
};

// The GID a rail uses, as NCCL picks it (NCCL_IB_GID_INDEX unset): InfiniBand: the port GID
// (index 0). RoCE: v2 before v1; within a type, the IPv4-mapped GID of the rail's own address,
// then any IPv4-mapped one, then a global IPv6 one, then link-local. `forced` >= 0 (the user's
// NCCL_IB_GID_INDEX) wins when that entry exists. nullopt when the port has no usable GID.
std::optional<GidChoice> choose_gid(const topology::RdmaPort& port, const std::string& rail_ipv4,
                                    int forced = -1);

// The IB MTU (256, 512, 1024, 2048 or 4096) a RoCE port runs on a netdev of this MTU: the
// largest that fits with the RoCEv2 headers (the kernel's iboe_get_mtu); 0 below 256 + headers.
int roce_mtu_for_netdev(int netdev_mtu);
// Both ends must agree: the smaller of the two active MTUs.
int path_mtu(int local, int remote);

// Why the receive slots the next rank described cannot be written into, or "". Both ranks must
// run the same --slots and --slot-size: a write is cut to the peer's slot size and staged in a
// slot of ours, so a larger peer slot would overrun our staging.
std::string peer_slots_problem(uint64_t peer_slots, uint64_t peer_slot_bytes, uint64_t our_slots,
                               uint64_t our_slot_bytes, const std::string& peer);

// Port `port` of RDMA device `device`, read from class/infiniband (GIDs included).
std::optional<topology::RdmaPort> read_rdma_port(const topology::Sysfs& sysfs,
                                                 const std::string& device, int port);

// What a verbs rail will run with, as sysfs predicts it; the link checks it against the port.
struct RailPlan {
  std::string device;
  int port = 1;
  bool roce = false;
  GidChoice gid;
  int mtu = 0;  // RoCE: from the GID's netdev; InfiniBand: 0, the port's active MTU decides
};
// `entry`: "mlx5_0", "mlx5_0:1", or the device's netdev ("eth2"). Throws std::runtime_error
// naming what is missing.
RailPlan plan_rail(const topology::Sysfs& sysfs, const std::string& entry,
                   const std::string& rail_ipv4, int forced_gid_index);

enum class RegPath { kHost, kDmaBuf, kPeerMem, kStaged };
const char* reg_path_name(RegPath p);

struct RegFacts {
  bool device_memory = false;
  bool dmabuf = false;   // the GPU and driver export dma-buf and rdma-core registers it
  bool peermem = false;  // nvidia_peermem (or the older nv_peer_mem) is loaded
};
// GPUDirect RDMA through dma-buf where it works (no out-of-tree module), else nvidia-peermem,
// else staged through pinned host memory. `forced` ("dmabuf", "peermem", "staged", "" = auto)
// throws std::invalid_argument when that path is not available.
RegPath choose_registration(const RegFacts& facts, std::string_view forced = {});

// Whether sysfs shows nvidia_peermem or nv_peer_mem loaded (sys/module/<name>).
bool peermem_loaded(const std::filesystem::path& sysfs_root);

}  // namespace railyard::rdma
