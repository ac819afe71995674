// The validation's verdict on this node's rails as a node-local file: `railyard-validate run
// --apply --findings FILE` writes it (atomically), and the device plugin reads it and turns a
// failed rail's VFs and bundles Unhealthy, so the kubelet stops handing them out. One format,
// written and read here only. Why a file and not a Node annotation: README, "From finding to
// schedule" (the device plugin keeps no API token).
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace railyard {

struct RailFindings {
  std::string node;          // the Node it was written for
  std::string validated_at;  // RFC 3339
  std::string verdict;       // "pass" or "fail"
  // rail -> what failed, for the device's Unhealthy reason: "slow: rail 5 (mlx5_5): busbw ..."
  std::map<int, std::string> failed;
};

inline constexpr size_t kMaxRailFindingsBytes = 64 * 1024;

std::string rail_findings_json(const RailFindings& f);
// Throws std::runtime_error naming what is wrong: not JSON, a field of the wrong type, a rail out
// of range, more than kMaxRailFindingsBytes. Reasons are cut to 300 characters.
RailFindings parse_rail_findings(const std::string& text);

}  // namespace railyard
