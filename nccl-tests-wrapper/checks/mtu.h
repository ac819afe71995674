// mtu: a rail's netdev MTU, its RDMA port's active MTU and the fabric's MTU agree. The port's
// active MTU comes from the verbs device (ibv_query_port) on a live node; on a RoCE port it is
// otherwise what the kernel derives from the netdev MTU, and on an InfiniBand port without a
// device to ask it is unknown.
#pragma once

#include <optional>
#include <string>

#include "nccl-tests-wrapper/checks/finding.h"

namespace railyard::validate {

// ibv_query_port's active_mtu in bytes; nullopt when the device cannot be opened.
std::optional<int> query_active_mtu(const std::string& rdma_device, int port);

struct MtuFacts {
  int netdev_mtu = 0;  // 0: no netdev
  bool roce = false;
  std::optional<int> active_mtu;  // from the device
};

// min_netdev_mtu: the config's minMtu (0: none); fabric_mtu: the IB MTU the fabric runs
// (256..4096; 0: none).
Finding judge_mtu(const std::string& subject, const MtuFacts& f, int min_netdev_mtu,
                  int fabric_mtu);

}  // namespace railyard::validate
