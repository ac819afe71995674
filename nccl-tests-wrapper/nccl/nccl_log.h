// nccl-path: what NCCL really did, read from its NCCL_DEBUG=INFO lines (subsystems INIT,NET):
// the network it chose ("Using network IB" or Socket, printed since 2.6), the devices its IB
// transport listed ("NET/IB : Using [0]mlx5_0:1/IB [1]...", since 2.4), and for each channel the
// transport and device index it went through, with /GDRDMA when GPUDirect RDMA was used: "Channel
// 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA" (2.7 and later), "Ring 00 : 3[3d000] ->
// 4[1b000] [receive] via NET/IB/0/GDRDMA" (2.5, 2.6), "Ring 00 : 36 -> 37 [send] via
// NET/Socket/0" (2.4). NCCL 2.3 and older listed their devices and channels otherwise: unread.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace railyard::validate {

struct NcclChannel {
  std::string channel;    // "00/0"
  std::string transport;  // "IB", "Socket", or a plugin's name
  int device = -1;        // index into the transport's device list
  bool gdr = false;
  std::string line;  // as NCCL printed it, for the evidence
};

struct NcclNetUse {
  bool any_info = false;
  std::optional<std::string> version;   // "2.4.7", from "NCCL version 2.4.7+cuda10.0"
  std::optional<std::string> network;   // "IB", "Socket"
  std::vector<std::string> ib_devices;  // by index: "mlx5_0:1"
  std::vector<NcclChannel> channels;    // over the network only (not P2P or SHM)
};

NcclNetUse parse_nccl_log(const std::string& output);

}  // namespace railyard::validate
