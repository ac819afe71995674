// Device health from sysfs: what makes a pool device usable, checked the same way on a live node
// and on a fixture. A device is unhealthy when its PCI function or its GPU is gone, when the RDMA
// port it depends on (its own and its PF's: the rail's uplink) is not ACTIVE, or, on RoCE, when
// the PF's netdev has no carrier. A VF's own netdev is not checked: it leaves the host's view
// when railyard-cni moves it into a pod.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "deviceplugin/pools.h"
#include "topology/model/node.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::deviceplugin {

struct Probe {
  enum class Kind { kExists, kPortActive, kCarrier };
  Kind kind;
  std::string path;               // below the sysfs root: "bus/pci/devices/0000:1a:00.0/..."
  std::string what;               // for the log: "GPU 0000:18:00.0", "port mlx5_0/1"
  std::string function_dir = {};  // ports: the function's directory, to tell "gone" apart
};

// What kind of fault the first failing probe found: the DRA driver names its taint after it.
enum class Fault {
  kNone,
  kGone,       // the PCI function or GPU left sysfs
  kPortDown,   // the RDMA port (its own, or its PF's) is not ACTIVE
  kNoCarrier,  // RoCE: the PF's netdev has no carrier
};

struct DeviceHealth {
  bool healthy = true;
  std::string reason;  // the first failing probe; empty when healthy
  Fault fault = Fault::kNone;
};

// The probes of one device, in the order they are checked. A device without a NIC function
// (fn.nic < 0: a GPU on its own, as the DRA driver publishes GPUs) is its GPU's probe alone.
std::vector<Probe> probes_for(const topology::Node& node, const PoolDevice& dev);

// Checks every device of every pool; probes shared by many devices (a PF's port) are read once.
class HealthChecker {
 public:
  HealthChecker(const topology::Sysfs& sysfs, const topology::Node& node,
                const std::vector<Pool>& pools);
  ~HealthChecker();
  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;
  // resource -> device ID -> health
  std::map<std::string, std::map<std::string, DeviceHealth>> check() const;
  // rail -> its PF's port is ACTIVE
  std::map<int, bool> rail_links() const;

 private:
  bool passes(const Probe& p) const;
  DeviceHealth failed(const Probe& p) const;
  int sys_fd_;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::vector<Probe>>>>>
      plan_;
  std::vector<std::pair<int, Probe>> rail_ports_;
};

}  // namespace railyard::deviceplugin
