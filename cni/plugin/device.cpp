#include "cni/plugin/device.h"

#include "cni/protocol/error.h"
#include "topology/discover.h"

namespace railyard::cni {

namespace topo = railyard::topology;

Device resolve_device(const NetConf& conf) {
  const topo::Sysfs sysfs(topo::sysfs_root_from(""));
  topo::Node node;
  try {
    const bool named = std::getenv("RAILYARD_RAILS_FILE") != nullptr;
    node = topo::discover(sysfs, topo::load_rails_config(topo::rails_file_from(""), named));
  } catch (const topo::RailsError& e) {
    throw CniError(kInvalidConfig, e.what());
  }
  Device dev;
  std::optional<topo::FunctionRef> ref;
  if (!conf.device_id.empty()) {
    const auto addr = *topo::PciAddress::parse(conf.device_id);
    dev.pci = addr.to_string();
    ref = node.find_function(addr);
    if (!ref) {
      // Not an RDMA function, but maybe a plain netdev: ask sysfs directly.
      auto dir = sysfs.open_dir(sysfs.sys("bus/pci/devices/" + dev.pci));
      if (!dir) throw CniError(kInvalidConfig, "deviceID " + dev.pci + ": no such PCI device");
      const auto nets = dir->list("net");
      if (nets.empty())
        throw CniError(kInvalidConfig, "deviceID " + dev.pci + " has no network interface");
      dev.netdev = nets.front();
      return dev;
    }
  } else {
    for (size_t i = 0; i < node.nics.size() && !ref; ++i) {
      if (node.nics[i].pf.netdev_name() == conf.device)
        ref = topo::FunctionRef{static_cast<int>(i), -1};
      for (size_t v = 0; v < node.nics[i].vfs.size() && !ref; ++v)
        if (node.nics[i].vfs[v].netdev_name() == conf.device)
          ref = topo::FunctionRef{static_cast<int>(i), static_cast<int>(v)};
    }
    if (!ref) {  // any netdev: no rail, no VF settings
      dev.netdev = conf.device;
      return dev;
    }
  }
  const topo::Nic& nic = node.nics[static_cast<size_t>(ref->nic)];
  const topo::NicFunction& fn = node.function(*ref);
  dev.pci = fn.pci.address.to_string();
  dev.netdev = fn.netdev_name();
  if (dev.netdev.empty())
    throw CniError(kInvalidConfig, "PCI device " + dev.pci + " has no network interface");
  dev.rail = nic.rail;
  dev.rail_key = nic.rail >= 0 ? std::to_string(nic.rail) : "";
  dev.pf_rdma = nic.pf.rdma_name();
  dev.pf_netdev = nic.pf.netdev_name();
  dev.vf_number = fn.vf_number;
  dev.rdma = fn.rdma_name();
  return dev;
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
