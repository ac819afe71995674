// Health of the DRA devices, read with the device plugin's probes (deviceplugin/health.h) so
// that both drivers call a device unhealthy for the same reasons: a NIC function whose port (or
// its PF's port) is not ACTIVE, a RoCE PF without carrier, a function or GPU that is gone.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "deviceplugin/health.h"
#include "deviceplugin/pools.h"
#include "topology/model/node.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::dra {

// PCI address -> health
using Health = std::map<std::string, deviceplugin::DeviceHealth>;

// What DRA publishes, as the device plugin's pool devices: the PF and VFs of every rail NIC,
// and each GPU on its own (no NIC function).
std::vector<deviceplugin::Pool> health_pools(const topology::Node& node);

Health check_health(const topology::Sysfs& sysfs, const topology::Node& node);

}  // namespace railyard::dra
