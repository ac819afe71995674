// railyard-cni's network configuration: sriov-cni's fields, so a NAD written for sriov-cni works
// by changing `type`, plus railyard's (device, mtu, arp sysctls, sbr, rails, stateDir).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cni-protocol/policy.h"

namespace railyard::cni {

struct VfSettings {  // applied on the PF over netlink, as sriov-cni does
  std::optional<int> vlan, vlan_qos;
  std::string vlan_proto;  // "802.1Q" or "802.1ad"
  std::string mac;
  std::optional<bool> spoofchk, trust;
  std::string link_state;                       // "auto", "enable", "disable"
  std::optional<int> min_tx_rate, max_tx_rate;  // Mbps
  bool any() const;
  bool any_besides_mac() const;
};

struct NetConf {
  std::string name;
  std::string device_id;  // PCI address: runtimeConfig.deviceID, deviceID or pciBusID
  std::string device;     // or a netdev name
  // "deviceFrom": "dra": the pod's ResourceClaims decide, through the files railyard-dra-driver
  // leaves in draDir (dra/handoff.h); each attachment takes the pod's next NIC, rail by rail.
  bool device_from_dra = false;
  std::string dra_dir;  // the node policy's (cni/protocol/policy.h)
  VfSettings vf;
  std::string mac;  // the pod interface's MAC (runtimeConfig.mac, then mac)
  std::optional<int> mtu;
  bool arp_sysctls = true;  // arp_ignore=1, arp_announce=2, rp_filter=0 on the rail interface
  bool sbr = true;
  int table_base = 100;
  int priority_base = 1000;
  nlohmann::json ipam;    // null when the network has no IPAM (L2 only)
  nlohmann::json rails;   // {"0": {ipam}, "mlx5_3": {ipam}, ...}: per-rail IPAM
  std::string state_dir;  // the node policy's

  // Throws CniError(kInvalidConfig) naming the field. stateDir and draDir come from the node
  // policy; a NAD naming another directory is refused.
  static NetConf parse(const nlohmann::json& config, const NodePolicy& policy);
};

}  // namespace railyard::cni
