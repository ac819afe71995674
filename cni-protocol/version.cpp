#include "cni-protocol/version.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace railyard::cni {

const std::vector<std::string>& supported_versions() {
  static const std::vector<std::string> v = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"};
  return v;
}

bool is_supported_version(const std::string& v) {
  const auto& all = supported_versions();
  return std::find(all.begin(), all.end(), v) != all.end();
}

namespace {
std::optional<std::array<int, 3>> parse(const std::string& v) {
  std::array<int, 3> p{};
  char tail = 0;
  if (std::sscanf(v.c_str(), "%d.%d.%d%c", &p[0], &p[1], &p[2], &tail) != 3) return std::nullopt;
  return p;
}
}  // namespace

std::optional<int> compare_versions(const std::string& a, const std::string& b) {
  auto pa = parse(a), pb = parse(b);
  if (!pa || !pb) return std::nullopt;
  return *pa < *pb ? -1 : (*pa == *pb ? 0 : 1);
}

bool at_least(const std::string& v, const std::string& min) {
  auto c = compare_versions(v, min);
  return c && *c >= 0;
}

}  // namespace railyard::cni
