#include "topology/model/path.h"

#include <array>

namespace railyard::topology {
namespace {

constexpr std::array<std::string_view, 6> kNames = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};

// The bridges that stand for one hop: the root port, then each switch's upstream port.
std::vector<PciAddress> hops(const PciDevice& d) {
  std::vector<PciAddress> out;
  if (!d.bridges.empty()) out.push_back(d.bridges[0]);
  const auto up = switch_upstream_ports(d);
  out.insert(out.end(), up.begin(), up.end());
  return out;
}

}  // namespace

std::string_view to_string(PathClass c) {
  return kNames[static_cast<size_t>(c)];
}

std::optional<PathClass> parse_path_class(std::string_view s) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == s) return static_cast<PathClass>(i);
  return std::nullopt;
}

PathClass path_class(const PciDevice& a, const PciDevice& b) {
  if (a.address == b.address) return PathClass::kX;
  if (a.host_bridge != b.host_bridge || a.host_bridge.empty()) {
    if (a.numa_node >= 0 && b.numa_node >= 0 && a.numa_node != b.numa_node) return PathClass::kSYS;
    return PathClass::kNODE;
  }
  const auto sa = hops(a);
  const auto sb = hops(b);
  size_t common = 0;
  while (common < sa.size() && common < sb.size() && sa[common] == sb[common]) ++common;
  if (common == 0) return PathClass::kPHB;
  const size_t traversed = (sa.size() - common) + (sb.size() - common) + 1;
  return traversed == 1 ? PathClass::kPIX : PathClass::kPXB;
}

std::vector<PciAddress> switch_upstream_ports(const PciDevice& d) {
  std::vector<PciAddress> out;
  for (size_t i = 1; i < d.bridges.size(); i += 2) out.push_back(d.bridges[i]);
  return out;
}

PathClass nccl_view(PathClass c) {
  return c == PathClass::kNODE ? PathClass::kPHB : c;
}

}  // namespace railyard::topology
