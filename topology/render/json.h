// The node model as JSON: the `railyard topo --json` contract (DESIGN.md), also used by the
// device plugin's --dry-run and by railyard-validate reports.
#pragma once

#include <nlohmann/json.hpp>

#include "topology/model/node.h"

namespace railyard::topology {

nlohmann::json to_json(const Node& node);
nlohmann::json to_json(const PciLink& link);

}  // namespace railyard::topology
