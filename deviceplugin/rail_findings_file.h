// The validation's findings on this node (common/rail_findings.h), as the device plugin uses
// them: the file is read again whenever it changes, and every device of a failed rail (its VFs,
// and the bundles whose NIC is on it) turns Unhealthy with the validation's reason, until a run
// passes. What sysfs already found wins: its reason is the more direct one.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/rail_findings.h"
#include "deviceplugin/health.h"
#include "deviceplugin/pools.h"

namespace railyard::deviceplugin {

using HealthByPool = std::map<std::string, std::map<std::string, DeviceHealth>>;

class RailFindingsFile {
 public:
  explicit RailFindingsFile(std::filesystem::path path) : path_(std::move(path)) {}
  // The findings as of the last good read; nothing failed when the file does not exist. A file
  // that cannot be read or parsed is logged once per change and the last good findings stay.
  const RailFindings& current();
  const std::filesystem::path& path() const { return path_; }

 private:
  // What the file was when last read: a rename over it (how the validation writes) changes the
  // inode even within one mtime tick.
  using Stamp = std::tuple<int64_t, int64_t, int64_t, uint64_t>;  // mtime s, ns, size, inode
  std::filesystem::path path_;
  std::optional<Stamp> seen_;
  RailFindings findings_;
};

// Marks in `health` every device of `pools` whose rail `findings` names as failed.
void mark_failed_rails(const RailFindings& findings, const std::vector<Pool>& pools,
                       HealthByPool& health);

}  // namespace railyard::deviceplugin
