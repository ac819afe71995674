#include "cni/plugin/config.h"

#include <filesystem>

#include "cni-protocol/error.h"
#include "cni-protocol/fields.h"
#include "common/log_escape.h"
#include "topology/sysfs/pci_address.h"

namespace railyard::cni {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& msg) {
  throw CniError(kInvalidConfig, msg);
}

// A directory the plugin writes in as root is the node's choice: a NAD may repeat it, as NADs
// written before the node policy do, but not name another.
std::string policy_dir(const json& j, const char* key, const std::string& node_dir,
                       const NodePolicy& policy) {
  const std::string wanted = string_field(j, key);
  if (!wanted.empty() && std::filesystem::path(wanted).lexically_normal() !=
                             std::filesystem::path(node_dir).lexically_normal())
    bad(std::string("'") + key + "' '" + escape_controls(wanted) + "' is not the node's " +
        node_dir + " " + policy.where() +
        ": the directories railyard-cni writes in are set by the node, not by a NAD");
  return node_dir;
}

bool valid_mac(const std::string& m) {
  if (m.size() != 17) return false;
  for (size_t i = 0; i < m.size(); ++i) {
    if (i % 3 == 2) {
      if (m[i] != ':') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(m[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool VfSettings::any_besides_mac() const {
  return vlan || vlan_qos || !vlan_proto.empty() || spoofchk || trust || !link_state.empty() ||
         min_tx_rate || max_tx_rate;
}

bool VfSettings::any() const {
  return any_besides_mac() || !mac.empty();
}

NetConf NetConf::parse(const json& j, const NodePolicy& policy) {
  NetConf c;
  c.name = string_field(j, "name");
  const json rc = j.contains("runtimeConfig") && j["runtimeConfig"].is_object() ? j["runtimeConfig"]
                                                                                : json::object();
  c.device_id = string_field(rc, "deviceID");
  if (c.device_id.empty()) c.device_id = string_field(j, "deviceID");
  if (c.device_id.empty()) c.device_id = string_field(j, "pciBusID");
  c.device = string_field(j, "device");
  if (!c.device.empty() && !valid_ifname(c.device))
    bad("device '" + escape_controls(c.device) + "' is not an interface name");
  if (!c.device_id.empty() && !topology::PciAddress::parse(c.device_id))
    bad("deviceID '" + escape_controls(c.device_id) + "' is not a PCI address (DDDD:BB:DD.F)");
  const std::string from = string_field(j, "deviceFrom");
  if (!from.empty() && from != "dra") bad("'deviceFrom' must be \"dra\" (or left out)");
  c.device_from_dra = from == "dra";
  c.dra_dir = policy_dir(j, "draDir", policy.dra_dir, policy);
  if (c.device_from_dra && (!c.device_id.empty() || !c.device.empty()))
    bad("deviceFrom \"dra\" takes the device from the pod's claims: leave out deviceID and device");
  if (c.device_id.empty() && c.device.empty() && !c.device_from_dra)
    bad("no device for network '" + escape_controls(string_field(j, "name")) +
        "': Multus passes a deviceID only when the pod requests the NAD's resource (its "
        "k8s.v1.cni.cncf.io/resourceName, railyard.io/railN or railyard.io/bundle) in "
        "resources.limits; or set device, or deviceFrom \"dra\" on a DRA node");

  c.vf.vlan = int_field(j, "vlan", 0, 4094);
  c.vf.vlan_qos = int_field(j, "vlanQoS", 0, 7);
  c.vf.vlan_proto = string_field(j, "vlanProto");
  if (!c.vf.vlan_proto.empty() && c.vf.vlan_proto != "802.1q" && c.vf.vlan_proto != "802.1Q" &&
      c.vf.vlan_proto != "802.1ad" && c.vf.vlan_proto != "802.1AD")
    bad("'vlanProto' must be 802.1q or 802.1ad");
  if ((c.vf.vlan_qos || !c.vf.vlan_proto.empty()) && !c.vf.vlan)
    bad("'vlanQoS' and 'vlanProto' need 'vlan'");
  c.vf.spoofchk = bool_field(j, "spoofchk", true);
  c.vf.trust = bool_field(j, "trust", true);
  c.vf.link_state = string_field(j, "link_state");
  if (!c.vf.link_state.empty() && c.vf.link_state != "auto" && c.vf.link_state != "enable" &&
      c.vf.link_state != "disable")
    bad("'link_state' must be auto, enable or disable");
  c.vf.min_tx_rate = int_field(j, "min_tx_rate", 0, 1000000000);
  c.vf.max_tx_rate = int_field(j, "max_tx_rate", 0, 1000000000);
  if (c.vf.min_tx_rate && c.vf.max_tx_rate && *c.vf.max_tx_rate &&
      *c.vf.min_tx_rate > *c.vf.max_tx_rate)
    bad("'min_tx_rate' is above 'max_tx_rate'");
  c.mac = string_field(rc, "mac");
  if (c.mac.empty()) c.mac = string_field(j, "mac");
  if (!c.mac.empty() && !valid_mac(c.mac))
    bad("mac '" + escape_controls(c.mac) + "' is not a MAC address");
  c.vf.mac = c.mac;
  c.mtu = int_field(j, "mtu", 68, 65535);

  if (j.contains("arp")) {
    if (!j["arp"].is_boolean()) bad("'arp' must be true or false");
    c.arp_sysctls = j["arp"].get<bool>();
  }
  if (j.contains("sbr") && !j["sbr"].is_null()) {
    const json& s = j["sbr"];
    if (s.is_boolean()) {
      c.sbr = s.get<bool>();
    } else if (s.is_object()) {
      c.table_base = int_field(s, "tableBase", 1, 0x7fff0000).value_or(100);
      c.priority_base = int_field(s, "priorityBase", 1, 32000).value_or(1000);
    } else {
      bad("'sbr' must be true, false or {\"tableBase\": N, \"priorityBase\": N}");
    }
  }
  if (j.contains("ipam") && !j["ipam"].is_null()) {
    if (!j["ipam"].is_object()) bad("'ipam' must be an object");
    c.ipam = j["ipam"];
  }
  if (j.contains("rails") && !j["rails"].is_null()) {
    if (!j["rails"].is_object())
      bad("'rails' must be a map of rail (index or name) to IPAM config");
    for (const auto& [k, v] : j["rails"].items())
      if (!v.is_object() || !v.contains("type") || !v["type"].is_string())
        bad("rails[\"" + k + "\"] must be an IPAM config with a 'type'");
    c.rails = j["rails"];
  }
  for (const json* ipam : {&c.ipam}) {
    if (ipam->is_null()) continue;
    if (!ipam->contains("type") || !(*ipam)["type"].is_string() ||
        (*ipam)["type"].get<std::string>().empty())
      bad("'ipam' needs a 'type'");
  }
  c.state_dir = policy_dir(j, "stateDir", policy.state_dir, policy);
  return c;
}

}  // namespace railyard::cni
