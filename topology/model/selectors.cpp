#include "topology/model/selectors.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "topology/sysfs/parse.h"

namespace railyard::topology {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string canonical_link_type(const std::string& t) {
  const std::string l = lower(t);
  if (l == "ib" || l == "infiniband") return "infiniband";
  if (l == "ether" || l == "ethernet" || l == "roce") return "ethernet";
  return l;
}

bool hex_matches(const std::vector<std::string>& wanted, uint16_t value) {
  if (wanted.empty()) return true;
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return parse_hex(w) == value; });
}

bool one_of(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

bool address_in(const std::vector<std::string>& wanted, const PciAddress& a) {
  if (wanted.empty()) return true;
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return PciAddress::parse(w) == a; });
}

std::vector<std::string> strings(const nlohmann::json& j, const std::string& key) {
  if (!j.is_array()) throw SelectorError("selector '" + key + "' must be a list of strings");
  std::vector<std::string> out;
  for (const auto& v : j) {
    if (!v.is_string()) throw SelectorError("selector '" + key + "' must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

bool Selectors::empty() const {
  return vendors.empty() && devices.empty() && drivers.empty() && pf_names.empty() &&
         root_devices.empty() && link_types.empty() && rdma_devices.empty() &&
         pci_addresses.empty() && rails.empty();
}

bool Selectors::matches(const Nic& nic, const NicFunction& fn) const {
  if (is_rdma && !fn.rdma) return false;
  if (!hex_matches(vendors, fn.pci.vendor) || !hex_matches(devices, fn.pci.device)) return false;
  if (!one_of(drivers, fn.pci.driver)) return false;
  if (!one_of(pf_names, nic.pf.netdev_name())) return false;
  if (!address_in(root_devices, nic.pf.pci.address)) return false;
  if (!address_in(pci_addresses, fn.pci.address)) return false;
  if (!one_of(rdma_devices, fn.rdma_name())) return false;
  if (!link_types.empty()) {
    const std::string have = canonical_link_type(nic.link_layer());
    if (std::none_of(link_types.begin(), link_types.end(),
                     [&](const std::string& t) { return canonical_link_type(t) == have; }))
      return false;
  }
  if (!rails.empty() && std::find(rails.begin(), rails.end(), nic.rail) == rails.end())
    return false;
  return true;
}

Selectors Selectors::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw SelectorError("selectors must be an object");
  Selectors s;
  for (const auto& [key, value] : j.items()) {
    if (key == "vendors")
      s.vendors = strings(value, key);
    else if (key == "devices")
      s.devices = strings(value, key);
    else if (key == "drivers")
      s.drivers = strings(value, key);
    else if (key == "pfNames")
      s.pf_names = strings(value, key);
    else if (key == "rootDevices")
      s.root_devices = strings(value, key);
    else if (key == "linkTypes")
      s.link_types = strings(value, key);
    else if (key == "rdmaDevices")
      s.rdma_devices = strings(value, key);
    else if (key == "pciAddresses")
      s.pci_addresses = strings(value, key);
    else if (key == "isRdma") {
      if (!value.is_boolean()) throw SelectorError("selector 'isRdma' must be true or false");
      s.is_rdma = value.get<bool>();
    } else if (key == "rails") {
      if (!value.is_array()) throw SelectorError("selector 'rails' must be a list of rail indices");
      for (const auto& v : value) {
        if (!v.is_number_integer() || v.get<int>() < 0)
          throw SelectorError("selector 'rails' must be a list of rail indices");
        s.rails.push_back(v.get<int>());
      }
    } else {
      throw SelectorError("unknown selector '" + key + "'");
    }
  }
  for (const auto& a : s.root_devices)
    if (!PciAddress::parse(a)) throw SelectorError("rootDevices: '" + a + "' is not a PCI address");
  for (const auto& a : s.pci_addresses)
    if (!PciAddress::parse(a))
      throw SelectorError("pciAddresses: '" + a + "' is not a PCI address");
  for (const auto& v : s.vendors)
    if (!parse_hex(v)) throw SelectorError("vendors: '" + v + "' is not a hex ID");
  for (const auto& v : s.devices)
    if (!parse_hex(v)) throw SelectorError("devices: '" + v + "' is not a hex ID");
  return s;
}

}  // namespace railyard::topology
