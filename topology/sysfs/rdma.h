// RDMA devices, their ports and GIDs, and their uverbs character devices, as sysfs shows them
// under a PCI function (".../0000:1a:00.0/infiniband/mlx5_0", ".../infiniband_verbs/uverbs0").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/sysfs/diagnostics.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::topology {

struct Gid {
  int index = 0;
  std::string gid;     // "fe80:0000:...:0001"
  std::string type;    // "IB/RoCE v1" or "RoCE v2"; empty when the kernel does not say
  std::string netdev;  // RoCE: the netdev the GID belongs to
};

struct RdmaPort {
  int number = 1;
  int state_code = 0;      // 4 = ACTIVE
  std::string state;       // "ACTIVE", "DOWN", ...
  std::string phys_state;  // "LinkUp", "Disabled", ...
  std::optional<double> rate_gbps;
  std::string rate;        // as the kernel wrote it: "400 Gb/sec (4X NDR)"
  std::string link_layer;  // "InfiniBand" or "Ethernet"
  std::vector<Gid> gids;   // non-zero entries only

  bool active() const { return state_code == 4; }
};

struct RdmaDevice {
  std::string name;    // "mlx5_0"
  std::string uverbs;  // "uverbs0"; the device node is /dev/infiniband/<uverbs>
  // rxe, siw: built on the function's netdev, not under the function in sysfs: its directory is
  // /sys/devices/virtual/infiniband/<name> (class/infiniband/<name> either way).
  bool software = false;
  std::vector<RdmaPort> ports;
  // The device's firmware ("28.39.1002") and board, where its driver says (mlx4/mlx5: board_id
  // is the PSID, "MT_0000000838"); empty where sysfs has none (rxe, siw).
  std::string fw_ver;
  std::string board_id;
};

// "400 Gb/sec (4X NDR)" -> 400
std::optional<double> parse_rate_gbps(const std::string& text);

// The netdev an RDMA device's port runs on: its PCI function's net/ entry, else (rxe, siw: a
// device in /sys/devices/virtual with no PCI parent) its `parent` attribute or the netdev of its
// GIDs. Empty when there is none.
std::string rdma_netdev(const Sysfs& sysfs, const std::string& device, int port = 1);
// The RDMA device on a netdev: the one under its PCI function, else a virtual device built on it.
// Empty when there is none.
std::string rdma_device_of_netdev(const Sysfs& sysfs, const std::string& netdev);
// The directory whose infiniband/ holds `device`: its PCI function, or /sys/devices/virtual for a
// software device (rxe, siw); read_rdma_devices() reads it either way.
std::optional<Dir> rdma_parent_dir(const Sysfs& sysfs, const std::string& device);

// Reads the RDMA devices below a PCI function directory. `with_gids` reads GID tables (up to
// 256 entries a port), which VFs of a large node do not need for the model.
std::vector<RdmaDevice> read_rdma_devices(const Sysfs& sysfs, const Dir& pci_dir, bool with_ports,
                                          bool with_gids, Diagnostics& diag);

}  // namespace railyard::topology
