#include "topology/sysfs/pci_address.h"

#include <cstdio>

namespace railyard::topology {
namespace {

std::optional<uint32_t> hex_field(std::string_view s, size_t min_len, size_t max_len) {
  if (s.size() < min_len || s.size() > max_len) return std::nullopt;
  uint32_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return std::nullopt;
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

}  // namespace

std::optional<PciAddress> PciAddress::parse(std::string_view text) {
  const size_t c1 = text.find(':');
  if (c1 == std::string_view::npos) return std::nullopt;
  const size_t c2 = text.find(':', c1 + 1);
  if (c2 == std::string_view::npos) return std::nullopt;
  const size_t dot = text.find('.', c2 + 1);
  if (dot == std::string_view::npos) return std::nullopt;
  auto domain = hex_field(text.substr(0, c1), 4, 8);
  auto bus = hex_field(text.substr(c1 + 1, c2 - c1 - 1), 2, 2);
  auto dev = hex_field(text.substr(c2 + 1, dot - c2 - 1), 2, 2);
  auto fn = hex_field(text.substr(dot + 1), 1, 1);
  if (!domain || !bus || !dev || !fn || *dev > 0x1f || *fn > 7) return std::nullopt;
  return PciAddress{*domain, static_cast<uint8_t>(*bus), static_cast<uint8_t>(*dev),
                    static_cast<uint8_t>(*fn)};
}

std::string PciAddress::to_string() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

}  // namespace railyard::topology
