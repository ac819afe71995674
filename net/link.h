// Network interface operations over libnl-route-3, in the calling thread's network namespace.
#pragma once

#include <optional>
#include <string>

#include "net/ip.h"
#include "net/netlink.h"

namespace railyard::net {

struct LinkInfo {
  int index = 0;
  std::string name;
  std::string mac;
  int mtu = 0;
  bool up = false;
};

struct LinkChange {
  std::optional<std::string> name;
  std::optional<int> mtu;
  std::optional<std::string> mac;
  std::optional<bool> up;
  int netns_fd = -1;  // move into this namespace
};

// A route through one interface (CNI results carry these; their other fields are not kernel
// routes' business here).
struct RouteSpec {
  IpPrefix dst;
  std::optional<IpAddress> gw;
  std::optional<int> mtu, priority, table;
};

std::optional<LinkInfo> find_link(const RouteSocket& sk, const std::string& name);
// Throws net::NetlinkError (nl_error(): NLE_EXIST for a name clash, NLE_INVAL/NLE_RANGE for an MTU
// the device refuses, ...).
void change_link(const RouteSocket& sk, const std::string& name, const LinkChange& change);
void add_address(const RouteSocket& sk, int ifindex, const IpPrefix& address);
void flush_addresses(const RouteSocket& sk, int ifindex);
bool has_address(const RouteSocket& sk, int ifindex, const IpPrefix& address);
void add_route(const RouteSocket& sk, int ifindex, const RouteSpec& route);
// /proc/sys/net/... of the calling thread's namespace. Throws std::runtime_error.
void write_sysctl(const std::string& path, const std::string& value);

}  // namespace railyard::net
