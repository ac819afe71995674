// Small, strict parsers for sysfs attribute values, and readers that report bad values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "topology/sysfs/diagnostics.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::topology {

std::optional<int64_t> parse_int(std::string_view s);   // decimal, optional leading '-'
std::optional<uint32_t> parse_hex(std::string_view s);  // "0x10de" or "10de"

// Reads a hex attribute no larger than `max`; on a missing, unreadable or garbage value reports
// an error naming the path and returns nullopt.
std::optional<uint32_t> read_hex(const Sysfs& sysfs, const Dir& dir, const std::string& rel,
                                 Diagnostics& diag, uint32_t max);

}  // namespace railyard::topology
