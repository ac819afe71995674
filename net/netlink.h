// Thin RAII over libnl-route-3: a NETLINK_ROUTE socket, owned libnl objects, and conversions
// between our IP types and nl_addr. Everything acts in the calling thread's network namespace.
#pragma once

#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <netlink/socket.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "net/ip.h"

namespace railyard::net {

class NetlinkError : public std::runtime_error {
 public:
  NetlinkError(const std::string& what, int nl_error);
  int nl_error() const { return nl_error_; }  // positive NLE_* code

 private:
  int nl_error_;
};

template <class T, void (*Free)(T*)>
struct NlDeleter {
  void operator()(T* p) const {
    if (p) Free(p);
  }
};
using NlAddr = std::unique_ptr<nl_addr, NlDeleter<nl_addr, nl_addr_put>>;
using NlCache = std::unique_ptr<nl_cache, NlDeleter<nl_cache, nl_cache_free>>;
using NlRoute = std::unique_ptr<rtnl_route, NlDeleter<rtnl_route, rtnl_route_put>>;
using NlRule = std::unique_ptr<rtnl_rule, NlDeleter<rtnl_rule, rtnl_rule_put>>;
using NlLink = std::unique_ptr<rtnl_link, NlDeleter<rtnl_link, rtnl_link_put>>;

class RouteSocket {
 public:
  RouteSocket();  // connects NETLINK_ROUTE in the current network namespace
  ~RouteSocket();
  RouteSocket(const RouteSocket&) = delete;
  RouteSocket& operator=(const RouteSocket&) = delete;
  nl_sock* get() const { return sk_; }

 private:
  nl_sock* sk_;
};

// 0 when there is no such interface.
int link_index(const RouteSocket& sk, const std::string& name);

NlAddr to_nl(const IpPrefix& p);
NlAddr to_nl(const IpAddress& a);
// A route's or rule's address; a missing or empty one is the family's default (prefix 0).
IpPrefix from_nl(const nl_addr* a, int family);

}  // namespace railyard::net
