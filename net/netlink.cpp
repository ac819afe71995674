#include "net/netlink.h"

#include <netlink/errno.h>

#include <cstring>

namespace railyard::net {

NetlinkError::NetlinkError(const std::string& what, int nl_error)
    : std::runtime_error(what + ": " + nl_geterror(nl_error)),
      nl_error_(nl_error < 0 ? -nl_error : nl_error) {}

RouteSocket::RouteSocket() : sk_(nl_socket_alloc()) {
  if (!sk_) throw NetlinkError("cannot allocate a netlink socket", NLE_NOMEM);
  if (int err = nl_connect(sk_, NETLINK_ROUTE); err < 0) {
    nl_socket_free(sk_);
    throw NetlinkError("cannot connect to rtnetlink", err);
  }
}

RouteSocket::~RouteSocket() {
  nl_socket_free(sk_);
}

int link_index(const RouteSocket& sk, const std::string& name) {
  rtnl_link* raw = nullptr;
  if (rtnl_link_get_kernel(sk.get(), 0, name.c_str(), &raw) < 0) return 0;
  NlLink link(raw);
  return rtnl_link_get_ifindex(link.get());
}

NlAddr to_nl(const IpPrefix& p) {
  NlAddr a(nl_addr_build(p.address.family, p.address.bytes.data(), p.address.size()));
  if (!a) throw NetlinkError("cannot build an address", NLE_NOMEM);
  nl_addr_set_prefixlen(a.get(), p.prefix_len);
  return a;
}

NlAddr to_nl(const IpAddress& a) {
  return to_nl(IpPrefix{a, a.max_prefix()});
}

IpPrefix from_nl(const nl_addr* a, int family) {
  IpPrefix p{IpAddress::any(family), 0};
  if (!a || nl_addr_get_len(a) == 0) return p;
  p.address.family = nl_addr_get_family(a);
  const size_t len = std::min<size_t>(nl_addr_get_len(a), 16);
  std::memcpy(p.address.bytes.data(), nl_addr_get_binary_addr(a), len);
  p.prefix_len = static_cast<int>(nl_addr_get_prefixlen(a));
  return p;
}

}  // namespace railyard::net
