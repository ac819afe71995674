#include "sbr/plugin/config.h"

#include <algorithm>

#include "cni-protocol/error.h"
#include "cni-protocol/fields.h"

namespace railyard::sbr {

using cni::CniError;
using cni::kInvalidConfig;

PluginConfig PluginConfig::parse(const nlohmann::json& j) {
  PluginConfig c;
  // 253-255 are the kernel's default, main and local tables; 0 is unspecified.
  c.table = cni::int_field(j, "table", 1, 0x7fffffff);
  if (c.table && *c.table >= 253 && *c.table <= 255)
    throw CniError(kInvalidConfig, "'table' " + std::to_string(*c.table) +
                                       " is one of the kernel's own tables (default, main, local)");
  c.rail = cni::int_field(j, "rail", 0, 4095);
  c.table_base = cni::int_field(j, "tableBase", 1, 0x7fff0000).value_or(100);
  c.priority_base = cni::int_field(j, "priorityBase", 1, 32000).value_or(1000);
  for (const char* key : {"deviceID", "pciBusID"}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_string())
      throw CniError(kInvalidConfig, std::string("'") + key + "' must be a string");
    if (c.device_id.empty()) c.device_id = j[key].get<std::string>();
  }
  if (auto b = cni::bool_field(j, "defaultRouteWithoutGateway")) c.default_without_gateway = *b;
  return c;
}

int PluginConfig::priority_for(int table) const {
  return priority_base + std::clamp(table - table_base, 0, 32000 - priority_base);
}

std::optional<std::pair<int, int>> PluginConfig::fixed_table() const {
  if (table) return std::make_pair(*table, priority_for(*table));
  if (rail) return std::make_pair(table_base + *rail, priority_base + *rail);
  return std::nullopt;
}

Plan plan_from_result(const cni::Result& prev, const std::string& ifname, const PluginConfig& cfg) {
  std::optional<int> index;
  for (size_t i = 0; i < prev.interfaces.size(); ++i)
    if (prev.interfaces[i].name == ifname) index = static_cast<int>(i);
  if (!prev.interfaces.empty() && !index)
    throw CniError(kInvalidConfig, "prevResult has no interface named " + ifname);
  Plan plan;
  plan.ifname = ifname;
  plan.default_without_gateway = cfg.default_without_gateway;
  for (const auto& ip : prev.ips) {
    // As the reference: an address without an interface index belongs to this interface.
    if (ip.interface && ip.interface != index) continue;
    plan.addresses.push_back(ip.address);
    if (ip.gateway) plan.gateways.push_back(*ip.gateway);
  }
  if (plan.addresses.empty())
    throw CniError(kInvalidConfig, "prevResult has no address for interface " + ifname);
  for (const auto& r : prev.routes) {
    // A default route with a gateway is the family's gateway when the IP config named none.
    if (r.dst.is_default() && r.gw) {
      plan.gateways.push_back(*r.gw);
      continue;
    }
    plan.routes.push_back(ExtraRoute{r.dst, r.gw});
  }
  return plan;
}

}  // namespace railyard::sbr
