// railyard-sbr's configuration, and the routing plan it implies for CNI_IFNAME.
//
//   {"type": "railyard-sbr", "cniVersion": "1.0.0", "name": "rail3",
//    "table": 103,                 // reference sbr's field: this table, explicitly
//    "rail": 3,                    // or the rail: table = tableBase + rail
//    "deviceID": "0000:19:00.2",   // or the VF (Multus injects it): its rail from topology/
//    "tableBase": 100, "priorityBase": 1000,
//    "defaultRouteWithoutGateway": true,
//    "logLevel": "info", "logFile": "/var/log/railyard/railyard-sbr.log",
//    "prevResult": {...}}
// With none of table/rail/deviceID, ADD takes the first table >= tableBase that no route or rule
// uses (as the reference does, rules included), and DEL/CHECK find it from the address's rule.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cni-protocol/result.h"
#include "sbr/routing.h"

namespace railyard::sbr {

struct PluginConfig {
  std::optional<int> table;
  std::optional<int> rail;
  std::string device_id;
  int table_base = 100;
  int priority_base = 1000;
  bool default_without_gateway = true;

  // Throws CniError(kInvalidConfig) on a field of the wrong type or range.
  static PluginConfig parse(const nlohmann::json& config);
  // Table and priority when they follow from the configuration alone.
  std::optional<std::pair<int, int>> fixed_table() const;
  int priority_for(int table) const;
};

// The plan for `ifname` from the previous result: its addresses, gateways and routes.
// Throws CniError(kInvalidConfig) when the result has no such interface or no address for it.
Plan plan_from_result(const cni::Result& prev, const std::string& ifname, const PluginConfig& cfg);

}  // namespace railyard::sbr
