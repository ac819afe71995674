// Source-based routing for one interface: its rail table and one rule per address, so that
// traffic sourced from rail k's address leaves through rail k.
//
// For an interface with addresses A/len (IPv4 and/or IPv6) in table T, priority P:
//   table T:  A/len's subnet  dev IF scope link src A     (src on IPv4 only: an IPv6 address may
//                                                           still be tentative, and needs none)
//             default via GW dev IF                        (per family, when a gateway is known)
//             default dev IF scope link                    (when none is: the rail is one L2
//                                                           subnet, neighbours are on-link)
//             DST via GW dev IF                            (extra routes)
//   rules:    from A lookup T priority P                   (one per address)
// The main table is left as it is.
//
// All functions act in the calling thread's network namespace (see net/netns.h).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/ip.h"

namespace railyard::sbr {

class SbrError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExtraRoute {
  net::IpPrefix dst;
  std::optional<net::IpAddress> gateway;
};

struct RouteSpec {
  net::IpPrefix dst;
  std::optional<net::IpAddress> gateway;
  std::optional<net::IpAddress> src;
  bool link_scope = false;
  std::string to_string(const std::string& ifname, int table) const;
};

struct RuleSpec {
  net::IpPrefix src;  // a host prefix
  int table = 0;
  int priority = 0;
  std::string to_string() const;
};

struct Plan {
  std::string ifname;
  int table = 0;
  int priority = 0;
  std::vector<net::IpPrefix> addresses;
  std::vector<net::IpAddress> gateways;  // at most one per family is used: the first
  std::vector<ExtraRoute> routes;
  bool default_without_gateway = true;

  std::vector<RouteSpec> route_specs() const;
  std::vector<RuleSpec> rule_specs() const;
};

// Programs the plan; applying it again leaves one copy. On failure, whatever this call added is
// taken away again before SbrError is thrown.
void apply(const Plan& plan);

// Takes away exactly what apply() adds. Succeeds when some or all of it is already gone, the
// interface included.
void remove(const Plan& plan);

// What differs from the plan, one sentence each ("missing rule ...", "unexpected route ...");
// empty when everything is in place.
std::vector<std::string> check(const Plan& plan);

// The first table >= base that no route and no rule uses.
int find_free_table(int base);
// The table and priority of the rule "from A lookup ...", if there is one.
std::optional<RuleSpec> rule_for_source(const net::IpAddress& a);

}  // namespace railyard::sbr
