// What railyard-sbr will program, decided without a kernel: plans from results, and addresses.
#include <catch2/catch.hpp>

#include "cni-protocol/error.h"
#include "net/ip.h"
#include "sbr/plugin/config.h"
#include "sbr/routing.h"

using namespace railyard::sbr;
using nlohmann::json;
using railyard::cni::CniError;
using railyard::net::IpAddress;
using railyard::net::IpPrefix;

namespace {
std::vector<std::string> routes_of(const Plan& p) {
  std::vector<std::string> out;
  for (const auto& r : p.route_specs()) out.push_back(r.to_string(p.ifname, p.table));
  return out;
}
}  // namespace

TEST_CASE("addresses and prefixes", "[sbr][ip]") {
  CHECK(IpPrefix::parse("10.1.2.3/24")->network().to_string() == "10.1.2.0/24");
  CHECK(IpPrefix::parse("fd00:1::5/64")->network().to_string() == "fd00:1::/64");
  CHECK(IpPrefix::parse("10.1.2.3/24")->host().to_string() == "10.1.2.3/32");
  CHECK(IpPrefix::parse("10.1.2.3/24")->contains(*IpAddress::parse("10.1.2.200")));
  CHECK_FALSE(IpPrefix::parse("10.1.2.3/24")->contains(*IpAddress::parse("10.1.3.1")));
  CHECK_FALSE(IpPrefix::parse("10.1.2.3/24")->contains(*IpAddress::parse("fd00::1")));
  for (const char* bad :
       {"10.1.2.3", "10.1.2.3/33", "10.1.2/24", "10.1.2.3/", "x/8", "fd00::/129", "10.1.2.3/2a"})
    CHECK_FALSE(IpPrefix::parse(bad));
  CHECK(IpPrefix::parse("10.1.2.3", true)->prefix_len == 32);
  CHECK(IpAddress::any(10).to_string() == "::");
}

TEST_CASE("a plan: subnet, gateway or on-link default, extra routes, one rule per address",
          "[sbr][plan]") {
  Plan p;
  p.ifname = "net3";
  p.table = 102;
  p.priority = 1002;
  p.addresses = {*IpPrefix::parse("10.10.2.2/24"), *IpPrefix::parse("fd00:2::2/64")};
  p.gateways = {*IpAddress::parse("10.10.2.1")};
  p.routes = {{*IpPrefix::parse("10.200.0.0/16"), IpAddress::parse("10.10.2.254")},
              {*IpPrefix::parse("10.10.2.0/24"), std::nullopt}};  // duplicates the subnet route
  CHECK(routes_of(p) ==
        std::vector<std::string>{
            "10.10.2.0/24 dev net3 scope link src 10.10.2.2 table 102",
            "fd00:2::/64 dev net3 table 102", "default via 10.10.2.1 dev net3 table 102",
            "default dev net3 table 102", "10.200.0.0/16 via 10.10.2.254 dev net3 table 102"});
  std::vector<std::string> rules;
  for (const auto& r : p.rule_specs()) rules.push_back(r.to_string());
  CHECK(rules == std::vector<std::string>{"from 10.10.2.2 lookup 102 priority 1002",
                                          "from fd00:2::2 lookup 102 priority 1002"});
  p.default_without_gateway = false;
  CHECK(routes_of(p).size() == 4);
  p.addresses = {*IpPrefix::parse("10.10.2.2/32")};
  p.routes.clear();
  CHECK(routes_of(p) == std::vector<std::string>{"default via 10.10.2.1 dev net3 table 102"});
}

TEST_CASE("railyard-sbr configuration", "[sbr][plan]") {
  auto cfg =
      PluginConfig::parse(json::parse(R"({"rail": 3, "tableBase": 200, "priorityBase": 500})"));
  CHECK(cfg.fixed_table() == std::make_pair(203, 503));
  cfg = PluginConfig::parse(json::parse(R"({"table": 150, "rail": 3})"));
  CHECK(cfg.fixed_table() == std::make_pair(150, 1050));  // table wins, as in the reference
  cfg = PluginConfig::parse(json::parse(R"({"pciBusID": "0000:19:00.2"})"));
  CHECK(cfg.device_id == "0000:19:00.2");
  CHECK_FALSE(cfg.fixed_table());
  for (const char* bad :
       {R"({"table": 255})", R"({"table": "100"})", R"({"rail": -1})", R"({"priorityBase": 40000})",
        R"({"deviceID": 5})", R"({"defaultRouteWithoutGateway": "yes"})"}) {
    INFO(bad);
    CHECK_THROWS_AS(PluginConfig::parse(json::parse(bad)), CniError);
  }
}

TEST_CASE("plans from a previous result: only CNI_IFNAME's addresses", "[sbr][plan]") {
  railyard::cni::Result prev = railyard::cni::parse_result(json::parse(R"({
    "interfaces": [{"name": "veth1"}, {"name": "net1", "sandbox": "/ns"}],
    "ips": [{"address": "10.0.0.2/24", "gateway": "10.0.0.1", "interface": 1},
            {"address": "192.168.0.2/24", "interface": 0}],
    "routes": [{"dst": "0.0.0.0/0", "gw": "10.0.0.254"}, {"dst": "10.9.0.0/16", "gw": "10.0.0.9"}]})"));
  Plan p = plan_from_result(prev, "net1", PluginConfig{});
  REQUIRE(p.addresses.size() == 1);
  CHECK(p.addresses[0].to_string() == "10.0.0.2/24");
  CHECK(p.gateways.size() == 2);  // the IP's, then the default route's
  REQUIRE(p.routes.size() == 1);
  CHECK(p.routes[0].dst.to_string() == "10.9.0.0/16");
  CHECK_THROWS_WITH(plan_from_result(prev, "net2", PluginConfig{}),
                    "prevResult has no interface named net2");
  railyard::cni::Result empty =
      railyard::cni::parse_result(json::parse(R"({"interfaces": [{"name": "net1"}]})"));
  CHECK_THROWS_WITH(plan_from_result(empty, "net1", PluginConfig{}),
                    "prevResult has no address for interface net1");
}
