// A PCI function address, "DDDD:BB:DD.F" as sysfs names it.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace railyard::topology {

struct PciAddress {
  uint32_t domain = 0;
  uint8_t bus = 0;
  uint8_t device = 0;
  uint8_t function = 0;

  // Strict: 4 to 8 hex digits of domain (VMD and Hyper-V use long ones), 2 of bus, 2 of device
  // (< 0x20), 1 of function (< 8). Anything else, "../x" included, is rejected.
  static std::optional<PciAddress> parse(std::string_view text);
  std::string to_string() const;  // lower case, domain at least 4 digits

  auto operator<=>(const PciAddress&) const = default;
};

}  // namespace railyard::topology
