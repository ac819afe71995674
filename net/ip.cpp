#include "net/ip.h"

#include <arpa/inet.h>

#include <charconv>

namespace railyard::net {

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  const std::string s(text);
  IpAddress a;
  if (::inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET;
    return a;
  }
  if (::inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET6;
    return a;
  }
  return std::nullopt;
}

IpAddress IpAddress::any(int family) {
  IpAddress a;
  a.family = family;
  return a;
}

std::string IpAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(family, bytes.data(), buf, sizeof buf);
  return buf;
}

std::optional<IpPrefix> IpPrefix::parse(std::string_view text, bool allow_bare) {
  const size_t slash = text.find('/');
  auto addr = IpAddress::parse(text.substr(0, slash));
  if (!addr) return std::nullopt;
  IpPrefix p{*addr, addr->max_prefix()};
  if (slash == std::string_view::npos) {
    if (!allow_bare) return std::nullopt;
    return p;
  }
  const std::string_view len = text.substr(slash + 1);
  int v = -1;
  auto [ptr, ec] = std::from_chars(len.data(), len.data() + len.size(), v);
  if (ec != std::errc() || ptr != len.data() + len.size() || len.empty() || v < 0 ||
      v > addr->max_prefix())
    return std::nullopt;
  p.prefix_len = v;
  return p;
}

IpPrefix IpPrefix::network() const {
  IpPrefix n = *this;
  for (size_t i = 0; i < address.size(); ++i) {
    const int bits = prefix_len - static_cast<int>(i) * 8;
    const uint8_t mask = bits >= 8   ? 0xff
                         : bits <= 0 ? 0
                                     : static_cast<uint8_t>(0xff << (8 - bits));
    n.address.bytes[i] &= mask;
  }
  return n;
}

IpPrefix IpPrefix::host() const {
  return IpPrefix{address, address.max_prefix()};
}

bool IpPrefix::contains(const IpAddress& a) const {
  if (a.family != address.family) return false;
  return IpPrefix{a, prefix_len}.network() == network();
}

std::string IpPrefix::to_string() const {
  return address.to_string() + "/" + std::to_string(prefix_len);
}

}  // namespace railyard::net
