// railyard-sbr driven as a runtime drives it, in namespaces with veth rails: the exact rules and
// tables, traffic leaving on the right rail, idempotence, removal, CHECK, and bad input.
#include <catch2/catch.hpp>

#include "test/support/rail_rig.h"

using namespace railyard::testing;
using nlohmann::json;

namespace {

const std::string kSbr = RAILYARD_BIN_DIR "/railyard-sbr";

json sbr_config(const RailRig& rig, int k, const std::string& version = "1.0.0") {
  return {{"cniVersion", version},
          {"name", "rail" + std::to_string(k)},
          {"type", "railyard-sbr"},
          {"rail", k},
          {"prevResult", rig.prev_result(k, version)}};
}

void add_all(const RailRig& rig) {
  for (int k = 0; k < static_cast<int>(rig.rails.size()); ++k) {
    auto r = run_plugin(kSbr, "ADD", rig.pod.path(), rig.rails[k].ifname, sbr_config(rig, k));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    // The previous result is passed on unchanged.
    CHECK(json::parse(r.out) == rig.prev_result(k));
  }
}

std::string expected_rules_v4(const RailRig& rig) {
  std::string s = "0:\tfrom all lookup local\n";
  for (size_t k = 0; k < rig.rails.size(); ++k)
    s += std::to_string(1000 + k) + ":\tfrom " + rig.rails[k].address.address.to_string() +
         " lookup " + std::to_string(100 + k) + "\n";
  return s + "32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n";
}

}  // namespace

TEST_CASE("8 rails, a subnet each (IPv4): exact rules and tables, traffic on its rail",
          "[sbr][netns]") {
  RailRig rig(8, RailLayout::kSubnetPerRailV4);
  const std::string main_before = rig.pod.ip("route show table main");
  add_all(rig);
  CHECK(rig.pod.ip("rule") == expected_rules_v4(rig));
  for (int k = 0; k < 8; ++k) {
    const std::string dev = rig.rails[k].ifname, n = std::to_string(k);
    CHECK(rig.pod.ip("route show table " + std::to_string(100 + k)) ==
          "default via 10.10." + n + ".1 dev " + dev +
              " proto static\n"
              "10.10." +
              n + ".0/24 dev " + dev + " proto static scope link src 10.10." + n + ".2\n");
  }
  CHECK(rig.pod.ip("route show table main") == main_before);  // main is left as it was

  for (int k = 0; k < 8; ++k) {
    const auto before = rig.peer_rx_packets();
    CHECK(rig.which_peer_receives_from(k) == k);
    const auto after = rig.peer_rx_packets();
    for (int j = 0; j < 8; ++j) {
      INFO("rail " << k << ", peer " << j);
      if (j == k)
        CHECK(after[j] > before[j]);
      else
        CHECK(after[j] == before[j]);
    }
  }

  for (int k = 0; k < 8; ++k) {
    auto r = run_plugin(kSbr, "CHECK", rig.pod.path(), rig.rails[k].ifname, sbr_config(rig, k));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());
  }
  for (int k = 0; k < 8; ++k)
    CHECK(run_plugin(kSbr, "DEL", rig.pod.path(), rig.rails[k].ifname, sbr_config(rig, k))
              .exit_code == 0);
  CHECK(
      rig.pod.ip("rule") ==
      "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n");
  for (int k = 0; k < 8; ++k)
    CHECK(rig.pod.ip("route show table " + std::to_string(100 + k)).empty());
  CHECK(rig.pod.ip("route show table main") == main_before);
}

TEST_CASE("8 rails in one subnet, no gateway (IPv4): on-link defaults keep each source on its rail",
          "[sbr][netns]") {
  RailRig rig(8, RailLayout::kOneSubnetV4);
  add_all(rig);
  CHECK(rig.pod.ip("rule") == expected_rules_v4(rig));
  for (int k = 0; k < 8; ++k) {
    const std::string dev = rig.rails[k].ifname;
    CHECK(rig.pod.ip("route show table " + std::to_string(100 + k)) ==
          "default dev " + dev +
              " proto static scope link\n"
              "10.20.0.0/16 dev " +
              dev + " proto static scope link src 10.20.0." + std::to_string(10 + k) + "\n");
  }
  // Every peer owns 10.20.0.1: without source-based routing all of it would leave on net1.
  for (int k = 0; k < 8; ++k) CHECK(rig.which_peer_receives_from(k) == k);
}

TEST_CASE("8 rails, a subnet each (IPv6): rules, tables and traffic", "[sbr][netns]") {
  RailRig rig(8, RailLayout::kSubnetPerRailV6);
  add_all(rig);
  std::string rules = "0:\tfrom all lookup local\n";
  for (int k = 0; k < 8; ++k)
    rules += std::to_string(1000 + k) + ":\tfrom " + rig.rails[k].address.address.to_string() +
             " lookup " + std::to_string(100 + k) + "\n";
  rules += "32766:\tfrom all lookup main\n";
  CHECK(rig.pod.ip("-6 rule") == rules);
  for (int k = 0; k < 8; ++k) {
    const std::string dev = rig.rails[k].ifname;
    CHECK(rig.pod.ip("-6 route show table " + std::to_string(100 + k)) ==
          rig.rails[k].address.network().to_string() + " dev " + dev +
              " proto static metric 1024 pref medium\n"
              "default via " +
              rig.rails[k].gateway->to_string() + " dev " + dev +
              " proto static metric 1024 pref medium\n");
  }
  for (int k = 0; k < 8; ++k) CHECK(rig.which_peer_receives_from(k) == k);
  for (int k = 0; k < 8; ++k) {
    CHECK(run_plugin(kSbr, "CHECK", rig.pod.path(), rig.rails[k].ifname, sbr_config(rig, k))
              .exit_code == 0);
    CHECK(run_plugin(kSbr, "DEL", rig.pod.path(), rig.rails[k].ifname, sbr_config(rig, k))
              .exit_code == 0);
  }
  CHECK(rig.pod.ip("-6 rule") == "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n");
}

TEST_CASE("ADD twice leaves one copy and CHECK names what was changed behind its back",
          "[sbr][netns]") {
  RailRig rig(1, RailLayout::kSubnetPerRailV4);
  add_all(rig);
  const std::string rules = rig.pod.ip("rule"), table = rig.pod.ip("route show table 100");
  add_all(rig);
  CHECK(rig.pod.ip("rule") == rules);
  CHECK(rig.pod.ip("route show table 100") == table);

  rig.pod.ip("route del default table 100");
  rig.pod.ip("rule add from 10.10.0.2 lookup 100 priority 1500");
  rig.pod.ip("rule del priority 1000");
  auto r = run_plugin(kSbr, "CHECK", rig.pod.path(), "net1", sbr_config(rig, 0));
  CHECK(r.exit_code == 1);
  auto err = json::parse(r.out);
  CHECK(err["code"] == 100);
  CHECK(err["msg"] ==
        "source-based routing for net1 differs: rule for 10.10.0.2 is 'from 10.10.0.2 lookup 100 "
        "priority 1500', "
        "expected 'from 10.10.0.2 lookup 100 priority 1000'; missing route 'default via 10.10.0.1 "
        "dev net1 table 100'");
}

TEST_CASE("DEL is idempotent: twice, with the interface gone, with the namespace gone",
          "[sbr][netns]") {
  RailRig rig(1, RailLayout::kSubnetPerRailV4);
  add_all(rig);
  CHECK(run_plugin(kSbr, "DEL", rig.pod.path(), "net1", sbr_config(rig, 0)).exit_code == 0);
  CHECK(run_plugin(kSbr, "DEL", rig.pod.path(), "net1", sbr_config(rig, 0)).exit_code == 0);

  add_all(rig);
  rig.pod.ip("link del net1");  // the CNI plugin gave the VF back before sbr's DEL ran
  auto r = run_plugin(kSbr, "DEL", rig.pod.path(), "net1", sbr_config(rig, 0));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(
      rig.pod.ip("rule") ==
      "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n");

  CHECK(run_plugin(kSbr, "DEL", "/var/run/netns/ry-no-such-netns", "net1", sbr_config(rig, 0))
            .exit_code == 0);
  json no_prev = sbr_config(rig, 0);
  no_prev.erase("prevResult");
  CHECK(run_plugin(kSbr, "DEL", rig.pod.path(), "net1", no_prev).exit_code == 0);
  CHECK(run_plugin(kSbr, "DEL", "", "net1", no_prev).exit_code == 0);
}

TEST_CASE("table by scan when no table, rail or deviceID is given, and DEL finds it again",
          "[sbr][netns]") {
  RailRig rig(2, RailLayout::kSubnetPerRailV4);
  rig.pod.ip("route add 10.50.0.0/16 dev net2 table 100");  // table 100 is taken
  json cfg = sbr_config(rig, 0);
  cfg.erase("rail");
  REQUIRE(run_plugin(kSbr, "ADD", rig.pod.path(), "net1", cfg).exit_code == 0);
  CHECK(rig.pod.ip("rule show priority 1001") == "1001:\tfrom 10.10.0.2 lookup 101\n");
  CHECK(run_plugin(kSbr, "CHECK", rig.pod.path(), "net1", cfg).exit_code == 0);
  CHECK(run_plugin(kSbr, "DEL", rig.pod.path(), "net1", cfg).exit_code == 0);
  CHECK(rig.pod.ip("route show table 101").empty());
  CHECK(rig.pod.ip("rule show priority 1001").empty());
}

TEST_CASE("explicit table, tableBase and priorityBase", "[sbr][netns]") {
  RailRig rig(2, RailLayout::kSubnetPerRailV4);
  json a = sbr_config(rig, 0);
  a.erase("rail");
  a["table"] = 4242;
  a["tableBase"] = 4240;
  a["priorityBase"] = 200;
  REQUIRE(run_plugin(kSbr, "ADD", rig.pod.path(), "net1", a).exit_code == 0);
  CHECK(rig.pod.ip("rule show priority 202") == "202:\tfrom 10.10.0.2 lookup 4242\n");
  json b = sbr_config(rig, 1);
  b["tableBase"] = 500;
  REQUIRE(run_plugin(kSbr, "ADD", rig.pod.path(), "net2", b).exit_code == 0);
  CHECK(rig.pod.ip("rule show priority 1001") == "1001:\tfrom 10.10.1.2 lookup 501\n");
}

TEST_CASE("older result versions are accepted and passed on", "[sbr][netns]") {
  RailRig rig(1, RailLayout::kSubnetPerRailV4);
  for (const char* v : {"0.3.1", "0.4.0", "1.1.0"}) {
    auto r = run_plugin(kSbr, "ADD", rig.pod.path(), "net1", sbr_config(rig, 0, v));
    INFO(v << ": " << r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["cniVersion"] == v);
    CHECK(json::parse(r.out)["ips"] == rig.prev_result(0, v)["ips"]);
  }
  CHECK(rig.pod.ip("rule show priority 1000") == "1000:\tfrom 10.10.0.2 lookup 100\n");
}

TEST_CASE("bad input: the right CNI error code, and nothing changed", "[sbr][netns]") {
  RailRig rig(1, RailLayout::kSubnetPerRailV4);
  const std::string rules = rig.pod.ip("rule"), routes = rig.pod.ip("route show table all");
  auto expect_error = [&](const std::string& netns, const std::string& ifname,
                          const std::string& stdin_text, int code, const std::string& msg_part) {
    auto r = run({kSbr},
                 {{"CNI_COMMAND", "ADD"},
                  {"CNI_CONTAINERID", "ctr1"},
                  {"CNI_NETNS", netns},
                  {"CNI_IFNAME", ifname},
                  {"CNI_PATH", "/usr/lib/cni"}},
                 stdin_text);
    INFO(stdin_text << "\n" << r.out << r.err);
    CHECK(r.exit_code == 1);
    auto err = json::parse(r.out);
    CHECK(err["code"] == code);
    CHECK_THAT(err["msg"].get<std::string>(), Catch::Contains(msg_part));
  };
  json good = sbr_config(rig, 0);
  json bad_prev = good;
  bad_prev["prevResult"]["ips"][0]["address"] = "10.10.0.2";
  expect_error(rig.pod.path(), "net1", bad_prev.dump(), 6,
               "ips[0].address '10.10.0.2' is not an address with a prefix length");
  json bad_ips = good;
  bad_ips["prevResult"]["ips"] = "10.10.0.2/24";
  expect_error(rig.pod.path(), "net1", bad_ips.dump(), 6, "ips must be a list");
  expect_error(rig.pod.path(), "net1", "{not json", 6, "not valid JSON");
  expect_error(rig.pod.path(), "net9", good.dump(), 7, "prevResult has no interface named net9");
  json missing_link = good;
  missing_link["prevResult"]["interfaces"][0]["name"] = "net9";
  expect_error(rig.pod.path(), "net9", missing_link.dump(), 7, "interface net9 does not exist");
  expect_error("/etc/hostname", "net1", good.dump(), 4, "/etc/hostname is not a network namespace");
  expect_error("/var/run/netns/ry-no-such-netns", "net1", good.dump(), 3, "does not exist");
  json v = good;
  v["cniVersion"] = "9.9.9";
  expect_error(rig.pod.path(), "net1", v.dump(), 1, "cniVersion '9.9.9' is not supported");
  json no_prev = good;
  no_prev.erase("prevResult");
  expect_error(rig.pod.path(), "net1", no_prev.dump(), 7, "must be chained");
  json bad_table = good;
  bad_table["table"] = 254;
  expect_error(rig.pod.path(), "net1", bad_table.dump(), 7, "kernel's own tables");
  json bad_rail = good;
  bad_rail["rail"] = "three";
  expect_error(rig.pod.path(), "net1", bad_rail.dump(), 7, "'rail' must be an integer");
  CHECK(rig.pod.ip("rule") == rules);
  CHECK(rig.pod.ip("route show table all") == routes);
}
