#include "topology/sysfs/parse.h"

#include <charconv>

namespace railyard::topology {

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint32_t> parse_hex(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return std::nullopt;
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint32_t> read_hex(const Sysfs& sysfs, const Dir& dir, const std::string& rel,
                                 Diagnostics& diag, uint32_t max) {
  Attr a = dir.read(rel);
  const fs::path p = dir / rel;
  if (a.status == Attr::Status::kMissing) {
    diag.error(sysfs.display(p), "missing");
    return std::nullopt;
  }
  if (a.status == Attr::Status::kUnreadable) {
    diag.error(sysfs.display(p), "unreadable: " + a.value);
    return std::nullopt;
  }
  auto v = parse_hex(a.value);
  if (!v || *v > max) {
    diag.error(sysfs.display(p), "garbage value '" + a.value + "'");
    return std::nullopt;
  }
  return v;
}

}  // namespace railyard::topology
