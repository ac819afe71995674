// A node's rail firmware as the firmware check compares it, for the check (firmware.cpp) and
// for the fleet, which names the nodes whose firmware differs from the fleet's majority.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topology/model/node.h"

namespace railyard::validate {

// Each rail NIC's firmware in rail order: "28.39.1002 (board MT_0000000838)", the board where
// sysfs has one; "" where the driver shows no fw_ver (rxe, siw).
std::vector<std::string> rail_firmware(const topology::Node& node);

// The versions counted ("" left out: unknown).
struct FirmwareTally {
  std::map<std::string, int> count;  // version -> how many hold it
  int known = 0;                     // how many versions were known
  std::string majority;              // held by more than half of them; "" when none is
};
FirmwareTally tally_firmware(const std::vector<std::string>& versions);

}  // namespace railyard::validate
