#include "cni/plugin/device.h"

#include "cni-protocol/error.h"
#include "topology/discover/resolve.h"

namespace railyard::cni {

namespace topo = railyard::topology;

// Only the touched function and the PFs that decide its rail are read, never the node's VFs:
// this runs once per attachment, eight times per pod (topology/discover/resolve.h).
Device resolve_device(const NetConf& conf) {
  const topo::Sysfs sysfs(topo::sysfs_root_from(""));
  std::optional<topo::ResolvedFunction> fn;
  try {
    const auto rails = topo::load_node_rails();
    if (!conf.device_id.empty()) {
      fn = topo::resolve_function(sysfs, rails, *topo::PciAddress::parse(conf.device_id));
      if (!fn)
        throw CniError(kInvalidConfig, "deviceID " +
                                           topo::PciAddress::parse(conf.device_id)->to_string() +
                                           ": no such PCI device");
    } else {
      fn = topo::resolve_netdev(sysfs, rails, conf.device);
    }
  } catch (const topo::RailsError& e) {
    throw CniError(kInvalidConfig, e.what());
  }
  Device dev;
  if (!fn || !fn->rdma_nic) {  // any netdev: no rail, no VF settings
    if (conf.device_id.empty()) {
      dev.netdev = conf.device;
      return dev;
    }
    dev.pci = fn->address.to_string();
    if (fn->netdev.empty())
      throw CniError(kInvalidConfig, "deviceID " + dev.pci + " has no network interface");
    dev.netdev = fn->netdev;
    return dev;
  }
  dev.pci = fn->address.to_string();
  dev.netdev = fn->netdev;
  if (dev.netdev.empty())
    throw CniError(kInvalidConfig, "PCI device " + dev.pci + " has no network interface");
  dev.rail = fn->rail;
  dev.rail_key = fn->rail >= 0 ? std::to_string(fn->rail) : "";
  dev.pf_rdma = fn->pf_rdma;
  dev.pf_netdev = fn->pf_netdev;
  dev.vf_number = fn->vf_number;
  dev.rdma = fn->rdma;
  return dev;
}

void require_allowed(const Device& dev, const NodePolicy& policy) {
  if (dev.rail >= 0 || policy.netdev_allowed(dev.netdev)) return;
  throw CniError(kInvalidConfig,
                 "device " + (dev.pci.empty() ? "" : dev.pci + " ") + "(" + dev.netdev +
                     ") is not a rail NIC of this node nor a VF of one, and the node policy does "
                     "not list it in 'netdevs' " +
                     policy.where() + ": a NAD may hand a pod only rail functions");
}

nlohmann::json ipam_for(const NetConf& conf, const Device& dev) {
  if (conf.rails.is_object()) {
    for (const std::string& key : {dev.rail_key, dev.pf_rdma, dev.pf_netdev})
      if (!key.empty() && conf.rails.contains(key)) return conf.rails[key];
    if (conf.ipam.is_null())
      throw CniError(kInvalidConfig,
                     "rails has no IPAM config for rail " +
                         (dev.rail_key.empty() ? std::string("(none)") : dev.rail_key) + " (" +
                         dev.pf_rdma + ", " + dev.pf_netdev + ") and there is no ipam");
  }
  return conf.ipam;
}

}  // namespace railyard::cni
