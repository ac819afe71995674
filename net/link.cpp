#include "net/link.h"

#include <fcntl.h>
#include <linux/if.h>
#include <netlink/route/addr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace railyard::net {

namespace {
using NlAddrObj = std::unique_ptr<rtnl_addr, NlDeleter<rtnl_addr, rtnl_addr_put>>;

std::string mac_of(rtnl_link* link) {
  nl_addr* a = rtnl_link_get_addr(link);
  if (!a) return "";
  char buf[64];
  nl_addr2str(a, buf, sizeof buf);
  return buf;
}
}  // namespace

std::optional<LinkInfo> find_link(const RouteSocket& sk, const std::string& name) {
  rtnl_link* raw = nullptr;
  if (rtnl_link_get_kernel(sk.get(), 0, name.c_str(), &raw) < 0) return std::nullopt;
  NlLink link(raw);
  return LinkInfo{rtnl_link_get_ifindex(link.get()), rtnl_link_get_name(link.get()),
                  mac_of(link.get()), static_cast<int>(rtnl_link_get_mtu(link.get())),
                  (rtnl_link_get_flags(link.get()) & IFF_UP) != 0};
}

void change_link(const RouteSocket& sk, const std::string& name, const LinkChange& c) {
  rtnl_link* raw = nullptr;
  if (int err = rtnl_link_get_kernel(sk.get(), 0, name.c_str(), &raw); err < 0)
    throw NetlinkError("interface " + name, err);
  NlLink orig(raw);
  NlLink change(rtnl_link_alloc());
  if (c.name) rtnl_link_set_name(change.get(), c.name->c_str());
  if (c.mtu) rtnl_link_set_mtu(change.get(), static_cast<unsigned>(*c.mtu));
  if (c.mac) {
    nl_addr* a = nullptr;
    if (int err = nl_addr_parse(c.mac->c_str(), AF_LLC, &a); err < 0)
      throw NetlinkError("MAC " + *c.mac, err);
    NlAddr owned(a);
    rtnl_link_set_addr(change.get(), a);
  }
  if (c.up) {
    if (*c.up)
      rtnl_link_set_flags(change.get(), IFF_UP);
    else
      rtnl_link_unset_flags(change.get(), IFF_UP);
  }
  if (c.netns_fd >= 0) rtnl_link_set_ns_fd(change.get(), c.netns_fd);
  if (int err = rtnl_link_change(sk.get(), orig.get(), change.get(), 0); err < 0) {
    std::string what = "cannot change " + name + ":";
    if (c.name) what += " name " + *c.name;
    if (c.mtu) what += " mtu " + std::to_string(*c.mtu);
    if (c.mac) what += " mac " + *c.mac;
    if (c.up) what += *c.up ? " up" : " down";
    if (c.netns_fd >= 0) what += " netns";
    throw NetlinkError(what, err);
  }
}

void add_address(const RouteSocket& sk, int ifindex, const IpPrefix& address) {
  NlAddrObj a(rtnl_addr_alloc());
  rtnl_addr_set_ifindex(a.get(), ifindex);
  NlAddr local = to_nl(address);
  rtnl_addr_set_local(a.get(), local.get());
  rtnl_addr_set_prefixlen(a.get(), address.prefix_len);
  if (!address.address.is_v4())
    rtnl_addr_set_flags(a.get(), IFA_F_NODAD);  // usable at once, as RDMA needs
  if (int err = rtnl_addr_add(sk.get(), a.get(), 0); err < 0)
    throw NetlinkError("cannot add address " + address.to_string(), err);
}

namespace {
std::vector<NlAddrObj> addresses_of(const RouteSocket& sk, int ifindex) {
  nl_cache* raw = nullptr;
  if (int err = rtnl_addr_alloc_cache(sk.get(), &raw); err < 0)
    throw NetlinkError("cannot list addresses", err);
  NlCache cache(raw);
  std::vector<NlAddrObj> out;
  for (nl_object* o = nl_cache_get_first(cache.get()); o; o = nl_cache_get_next(o)) {
    auto* a = reinterpret_cast<rtnl_addr*>(o);
    if (rtnl_addr_get_ifindex(a) != ifindex) continue;
    nl_object_get(o);
    out.emplace_back(a);
  }
  return out;
}
}  // namespace

void flush_addresses(const RouteSocket& sk, int ifindex) {
  for (auto& a : addresses_of(sk, ifindex)) {
    nl_addr* local = rtnl_addr_get_local(a.get());
    if (local && nl_addr_get_family(local) == AF_INET6 && nl_addr_get_len(local) == 16 &&
        static_cast<const uint8_t*>(nl_addr_get_binary_addr(local))[0] == 0xfe)
      continue;  // link-local: the kernel's
    int err = rtnl_addr_delete(sk.get(), a.get(), 0);
    if (err < 0 && err != -NLE_NOADDR && err != -NLE_OBJ_NOTFOUND)
      throw NetlinkError("cannot delete an address", err);
  }
}

bool has_address(const RouteSocket& sk, int ifindex, const IpPrefix& address) {
  for (auto& a : addresses_of(sk, ifindex)) {
    const auto p = from_nl(rtnl_addr_get_local(a.get()), address.address.family);
    if (p.address == address.address &&
        static_cast<int>(rtnl_addr_get_prefixlen(a.get())) == address.prefix_len)
      return true;
  }
  return false;
}

void add_route(const RouteSocket& sk, int ifindex, const RouteSpec& r) {
  NlRoute route(rtnl_route_alloc());
  rtnl_route_set_family(route.get(), static_cast<uint8_t>(r.dst.address.family));
  rtnl_route_set_table(route.get(), r.table ? static_cast<uint32_t>(*r.table) : RT_TABLE_MAIN);
  rtnl_route_set_protocol(route.get(), RTPROT_STATIC);
  if (r.priority) rtnl_route_set_priority(route.get(), static_cast<uint32_t>(*r.priority));
  NlAddr dst = to_nl(r.dst);
  rtnl_route_set_dst(route.get(), dst.get());
  rtnl_route_set_scope(route.get(), r.gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK);
  rtnl_nexthop* nh = rtnl_route_nh_alloc();
  rtnl_route_nh_set_ifindex(nh, ifindex);
  if (r.gw) {
    NlAddr gw = to_nl(*r.gw);
    rtnl_route_nh_set_gateway(nh, gw.get());
  }
  rtnl_route_add_nexthop(route.get(), nh);
  if (r.mtu) rtnl_route_set_metric(route.get(), RTAX_MTU, static_cast<unsigned>(*r.mtu));
  if (int err = rtnl_route_add(sk.get(), route.get(), NLM_F_CREATE | NLM_F_REPLACE); err < 0)
    throw NetlinkError("cannot add route " + r.dst.to_string(), err);
}

void write_sysctl(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  const bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  const int saved = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path + ": " + std::strerror(saved));
}

}  // namespace railyard::net
