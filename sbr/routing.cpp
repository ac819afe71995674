#include "sbr/routing.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <netlink/errno.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

#include "net/netlink.h"

namespace railyard::sbr {

using net::from_nl;
using net::IpAddress;
using net::IpPrefix;
using net::link_index;
using net::NetlinkError;
using net::NlAddr;
using net::NlCache;
using net::NlRoute;
using net::NlRule;
using net::RouteSocket;
using net::to_nl;

std::string RouteSpec::to_string(const std::string& ifname, int table) const {
  std::string s = dst.is_default() ? "default" : dst.network().to_string();
  if (gateway) s += " via " + gateway->to_string();
  s += " dev " + ifname;
  if (link_scope) s += " scope link";
  if (src) s += " src " + src->to_string();
  return s + " table " + std::to_string(table);
}

std::string RuleSpec::to_string() const {
  return "from " + src.address.to_string() + " lookup " + std::to_string(table) + " priority " +
         std::to_string(priority);
}

std::vector<RouteSpec> Plan::route_specs() const {
  std::vector<RouteSpec> out;
  std::set<IpPrefix> dsts;
  auto add = [&](RouteSpec r) {
    r.dst = r.dst.network();
    if (dsts.insert(r.dst).second) out.push_back(std::move(r));
  };
  for (const auto& a : addresses) {
    if (a.prefix_len == a.address.max_prefix()) continue;  // a /32 has no subnet to route
    // IPv6 routes have no link scope in the kernel, and need no src (see routing.h).
    RouteSpec r{a.network(), std::nullopt, std::nullopt, a.address.is_v4()};
    if (a.address.is_v4()) r.src = a.address;
    add(std::move(r));
  }
  for (int family : {AF_INET, AF_INET6}) {
    if (std::none_of(addresses.begin(), addresses.end(),
                     [&](const IpPrefix& a) { return a.address.family == family; }))
      continue;
    auto gw = std::find_if(gateways.begin(), gateways.end(),
                           [&](const IpAddress& g) { return g.family == family; });
    const IpPrefix def{IpAddress::any(family), 0};
    if (gw != gateways.end())
      add(RouteSpec{def, *gw, std::nullopt, false});
    else if (default_without_gateway)
      add(RouteSpec{def, std::nullopt, std::nullopt, family == AF_INET});
  }
  for (const auto& r : routes) {
    if (std::none_of(addresses.begin(), addresses.end(),
                     [&](const IpPrefix& a) { return a.address.family == r.dst.address.family; }))
      continue;
    add(RouteSpec{r.dst, r.gateway, std::nullopt, !r.gateway && r.dst.address.is_v4()});
  }
  return out;
}

std::vector<RuleSpec> Plan::rule_specs() const {
  std::vector<RuleSpec> out;
  for (const auto& a : addresses) out.push_back(RuleSpec{a.host(), table, priority});
  return out;
}

namespace {

NlRoute build_route(const RouteSpec& spec, int ifindex, int table) {
  NlRoute route(rtnl_route_alloc());
  const int family = spec.dst.address.family;
  rtnl_route_set_family(route.get(), static_cast<uint8_t>(family));
  rtnl_route_set_table(route.get(), static_cast<uint32_t>(table));
  rtnl_route_set_protocol(route.get(), RTPROT_STATIC);
  rtnl_route_set_type(route.get(), RTN_UNICAST);
  rtnl_route_set_scope(route.get(),
                       spec.link_scope && family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE);
  NlAddr dst = to_nl(spec.dst);
  rtnl_route_set_dst(route.get(), dst.get());
  if (spec.src) {
    NlAddr src = to_nl(*spec.src);
    rtnl_route_set_pref_src(route.get(), src.get());
  }
  rtnl_nexthop* nh = rtnl_route_nh_alloc();
  rtnl_route_nh_set_ifindex(nh, ifindex);
  if (spec.gateway) {
    NlAddr gw = to_nl(*spec.gateway);
    rtnl_route_nh_set_gateway(nh, gw.get());
  }
  rtnl_route_add_nexthop(route.get(), nh);  // the route owns nh now
  return route;
}

NlRule build_rule(const RuleSpec& spec) {
  NlRule rule(rtnl_rule_alloc());
  rtnl_rule_set_family(rule.get(), spec.src.address.family);
  NlAddr src = to_nl(spec.src);
  rtnl_rule_set_src(rule.get(), src.get());
  rtnl_rule_set_table(rule.get(), static_cast<uint32_t>(spec.table));
  rtnl_rule_set_prio(rule.get(), static_cast<uint32_t>(spec.priority));
  rtnl_rule_set_action(rule.get(), FR_ACT_TO_TBL);
  return rule;
}

struct LiveRoute {
  RouteSpec spec;
  int ifindex = 0;
  int table = 0;
  int scope = 0;
};

std::vector<LiveRoute> dump_routes(const RouteSocket& sk) {
  nl_cache* raw = nullptr;
  if (int err = rtnl_route_alloc_cache(sk.get(), AF_UNSPEC, 0, &raw); err < 0)
    throw NetlinkError("cannot list routes", err);
  NlCache cache(raw);
  std::vector<LiveRoute> out;
  for (nl_object* o = nl_cache_get_first(cache.get()); o; o = nl_cache_get_next(o)) {
    auto* r = reinterpret_cast<rtnl_route*>(o);
    if (rtnl_route_get_type(r) != RTN_UNICAST) continue;
    const int family = rtnl_route_get_family(r);
    LiveRoute lr;
    lr.table = static_cast<int>(rtnl_route_get_table(r));
    lr.scope = rtnl_route_get_scope(r);
    lr.spec.dst = from_nl(rtnl_route_get_dst(r), family).network();
    if (nl_addr* src = rtnl_route_get_pref_src(r); src && nl_addr_get_len(src) > 0)
      lr.spec.src = from_nl(src, family).address;
    lr.spec.link_scope = lr.scope == RT_SCOPE_LINK;
    if (rtnl_route_get_nnexthops(r) > 0) {
      rtnl_nexthop* nh = rtnl_route_nexthop_n(r, 0);
      lr.ifindex = rtnl_route_nh_get_ifindex(nh);
      if (nl_addr* gw = rtnl_route_nh_get_gateway(nh); gw && nl_addr_get_len(gw) > 0)
        lr.spec.gateway = from_nl(gw, family).address;
    }
    out.push_back(std::move(lr));
  }
  return out;
}

std::vector<RuleSpec> dump_rules(const RouteSocket& sk) {
  nl_cache* raw = nullptr;
  if (int err = rtnl_rule_alloc_cache(sk.get(), AF_UNSPEC, &raw); err < 0)
    throw NetlinkError("cannot list rules", err);
  NlCache cache(raw);
  std::vector<RuleSpec> out;
  for (nl_object* o = nl_cache_get_first(cache.get()); o; o = nl_cache_get_next(o)) {
    auto* r = reinterpret_cast<rtnl_rule*>(o);
    if (rtnl_rule_get_action(r) != FR_ACT_TO_TBL) continue;
    nl_addr* src = rtnl_rule_get_src(r);
    if (!src || nl_addr_get_len(src) == 0) continue;  // "from all": not a source rule
    out.push_back(RuleSpec{from_nl(src, rtnl_rule_get_family(r)),
                           static_cast<int>(rtnl_rule_get_table(r)),
                           static_cast<int>(rtnl_rule_get_prio(r))});
  }
  return out;
}

bool same_rule(const RuleSpec& a, const RuleSpec& b) {
  return a.src == b.src && a.table == b.table && a.priority == b.priority;
}

bool same_route(const LiveRoute& live, const RouteSpec& want, int ifindex) {
  return live.ifindex == ifindex && live.spec.dst == want.dst &&
         live.spec.gateway == want.gateway && live.spec.src == want.src &&
         (want.dst.address.family != AF_INET || live.spec.link_scope == want.link_scope);
}

int require_link(const RouteSocket& sk, const std::string& ifname) {
  const int ifindex = link_index(sk, ifname);
  if (ifindex == 0) throw SbrError("interface " + ifname + " does not exist");
  return ifindex;
}

}  // namespace

void apply(const Plan& plan) {
  RouteSocket sk;
  const int ifindex = require_link(sk, plan.ifname);
  const auto existing_rules = dump_rules(sk);
  const auto existing_routes = dump_routes(sk);

  std::vector<NlRoute> added_routes;
  std::vector<NlRule> added_rules;
  auto roll_back = [&] {
    for (auto it = added_rules.rbegin(); it != added_rules.rend(); ++it)
      rtnl_rule_delete(sk.get(), it->get(), 0);
    for (auto it = added_routes.rbegin(); it != added_routes.rend(); ++it)
      rtnl_route_delete(sk.get(), it->get(), 0);
  };
  try {
    for (const auto& spec : plan.route_specs()) {
      const bool present =
          std::any_of(existing_routes.begin(), existing_routes.end(), [&](const LiveRoute& r) {
            return r.table == plan.table && same_route(r, spec, ifindex);
          });
      if (present) continue;
      NlRoute route = build_route(spec, ifindex, plan.table);
      if (int err = rtnl_route_add(sk.get(), route.get(), NLM_F_CREATE | NLM_F_REPLACE); err < 0)
        throw NetlinkError("cannot add route " + spec.to_string(plan.ifname, plan.table), err);
      added_routes.push_back(std::move(route));
    }
    for (const auto& spec : plan.rule_specs()) {
      if (std::any_of(existing_rules.begin(), existing_rules.end(),
                      [&](const RuleSpec& r) { return same_rule(r, spec); }))
        continue;
      NlRule rule = build_rule(spec);
      if (int err = rtnl_rule_add(sk.get(), rule.get(), NLM_F_CREATE | NLM_F_EXCL);
          err < 0 && err != -NLE_EXIST)
        throw NetlinkError("cannot add rule " + spec.to_string(), err);
      added_rules.push_back(std::move(rule));
    }
  } catch (const std::exception& e) {
    roll_back();
    throw SbrError(e.what());
  }
}

void remove(const Plan& plan) {
  RouteSocket sk;
  for (const auto& spec : plan.rule_specs()) {
    NlRule rule = build_rule(spec);
    int err = rtnl_rule_delete(sk.get(), rule.get(), 0);
    if (err < 0 && err != -NLE_OBJ_NOTFOUND && err != -NLE_NOADDR)
      throw SbrError(NetlinkError("cannot delete rule " + spec.to_string(), err).what());
  }
  const int ifindex = link_index(sk, plan.ifname);
  if (ifindex == 0) return;  // the kernel took the interface's routes with it
  for (const auto& live : dump_routes(sk)) {
    if (live.table != plan.table || live.ifindex != ifindex) continue;
    const auto specs = plan.route_specs();
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const RouteSpec& s) {
      return same_route(live, s, ifindex);
    });
    if (spec == specs.end()) continue;  // not ours
    NlRoute route = build_route(*spec, ifindex, plan.table);
    int err = rtnl_route_delete(sk.get(), route.get(), 0);
    if (err < 0 && err != -NLE_OBJ_NOTFOUND)
      throw SbrError(
          NetlinkError("cannot delete route " + spec->to_string(plan.ifname, plan.table), err)
              .what());
  }
}

std::vector<std::string> check(const Plan& plan) {
  RouteSocket sk;
  std::vector<std::string> diffs;
  const int ifindex = link_index(sk, plan.ifname);
  if (ifindex == 0) return {"interface " + plan.ifname + " does not exist"};
  const auto rules = dump_rules(sk);
  for (const auto& want : plan.rule_specs()) {
    if (std::any_of(rules.begin(), rules.end(),
                    [&](const RuleSpec& r) { return same_rule(r, want); }))
      continue;
    auto other = std::find_if(rules.begin(), rules.end(),
                              [&](const RuleSpec& r) { return r.src == want.src; });
    if (other != rules.end())
      diffs.push_back("rule for " + want.src.address.to_string() + " is '" + other->to_string() +
                      "', expected '" + want.to_string() + "'");
    else
      diffs.push_back("missing rule '" + want.to_string() + "'");
  }
  const auto routes = dump_routes(sk);
  const auto specs = plan.route_specs();
  for (const auto& want : specs) {
    if (!std::any_of(routes.begin(), routes.end(), [&](const LiveRoute& r) {
          return r.table == plan.table && same_route(r, want, ifindex);
        }))
      diffs.push_back("missing route '" + want.to_string(plan.ifname, plan.table) + "'");
  }
  for (const auto& live : routes) {
    if (live.table != plan.table) continue;
    if (std::any_of(specs.begin(), specs.end(),
                    [&](const RouteSpec& s) { return same_route(live, s, ifindex); }))
      continue;
    if (live.spec.dst.address.family == AF_INET6 && live.spec.dst.address.bytes[0] == 0xff)
      continue;  // multicast
    diffs.push_back("unexpected route '" +
                    live.spec.to_string("#" + std::to_string(live.ifindex), live.table) + "'");
  }
  return diffs;
}

int find_free_table(int base) {
  RouteSocket sk;
  std::set<int> used;
  for (const auto& r : dump_routes(sk)) used.insert(r.table);
  for (const auto& r : dump_rules(sk)) used.insert(r.table);
  int t = base;
  while (used.count(t)) ++t;
  return t;
}

std::optional<RuleSpec> rule_for_source(const IpAddress& a) {
  RouteSocket sk;
  for (const auto& r : dump_rules(sk))
    if (r.src == IpPrefix{a, a.max_prefix()}) return r;
  return std::nullopt;
}

}  // namespace railyard::sbr
