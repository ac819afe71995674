// One PCI function as sysfs describes it, and where it hangs in the PCIe tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/sysfs/diagnostics.h"
#include "topology/sysfs/pci_address.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::topology {

struct PciLink {
  std::optional<double> current_speed_gts;  // GT/s per lane
  std::optional<int> current_width;
  std::optional<double> max_speed_gts;
  std::optional<int> max_width;

  // True when the link trained below what the device can do (a bad cable, slot or riser).
  bool degraded() const;
  std::string to_string() const;  // "x16 32.0 GT/s" or "x8/x16 32.0 GT/s"
};

struct PciDevice {
  PciAddress address;
  uint16_t vendor = 0;
  uint16_t device = 0;
  uint32_t class_code = 0;  // 24 bits: class, subclass, prog-if
  int numa_node = -1;       // -1: the platform does not say (cloud VMs)
  std::string driver;       // empty when unbound
  PciLink link;
  // The host bridge ("pci0000:17": domain and root bus) and the bridges between it and this
  // function, root port first, taken from the resolved sysfs path.
  std::string host_bridge;
  std::vector<PciAddress> bridges;

  uint16_t base_class() const { return static_cast<uint16_t>(class_code >> 8); }
};

// Parses "16.0 GT/s PCIe" (kernels >= 5.x) and "8 GT/s" (older); nullopt for "Unknown".
std::optional<double> parse_link_speed(const std::string& text);

// Reads the function whose resolved sysfs directory is `dir`. Returns nullopt, with an error
// naming the path, when an attribute that identifies it (vendor, device, class) is bad.
std::optional<PciDevice> read_pci_device(const Sysfs& sysfs, const Dir& dir, Diagnostics& diag);

// A VF, read lightly: its driver is its own, the rest comes from the PCIe spec's SR-IOV model.
// Vendor and device ID are one field of the PF's SR-IOV capability (so the first VF's `sibling`
// values serve all of them); class, NUMA node and upstream bridges are the PF's.
std::optional<PciDevice> read_vf_device(const Sysfs& sysfs, const Dir& dir, const PciDevice& pf,
                                        const PciDevice* sibling, Diagnostics& diag);

}  // namespace railyard::topology
