// IPv4/IPv6 addresses and prefixes, parsed strictly (inet_pton).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace railyard::net {

struct IpAddress {
  int family = 0;  // AF_INET or AF_INET6
  std::array<uint8_t, 16> bytes{};

  static std::optional<IpAddress> parse(std::string_view text);
  static IpAddress any(int family);  // 0.0.0.0 or ::
  std::string to_string() const;
  size_t size() const { return family == 10 /* AF_INET6 */ ? 16 : 4; }
  int max_prefix() const { return static_cast<int>(size() * 8); }
  bool is_v4() const { return family == 2; /* AF_INET */ }
  auto operator<=>(const IpAddress&) const = default;
};

struct IpPrefix {
  IpAddress address;
  int prefix_len = 0;

  // "10.0.0.2/24", "fd00::2/64"; a bare address is rejected unless allow_bare (then /32, /128).
  static std::optional<IpPrefix> parse(std::string_view text, bool allow_bare = false);
  IpPrefix network() const;  // host bits cleared
  IpPrefix host() const;     // the address alone: /32 or /128
  bool contains(const IpAddress& a) const;
  bool is_default() const { return prefix_len == 0; }
  std::string to_string() const;
  auto operator<=>(const IpPrefix&) const = default;
};

}  // namespace railyard::net
