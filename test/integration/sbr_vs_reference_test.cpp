// The same inputs to Debian's reference sbr (/usr/lib/cni/sbr, 1.1.x) and to railyard-sbr, one
// test per place where railyard-sbr is deliberately different (sbr/README.md lists them all).
// Each asserts the reference's behaviour too, so a changed reference shows up here.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "test/support/rail_rig.h"

using namespace railyard::testing;
using nlohmann::json;

namespace {

const std::string kOurs = RAILYARD_BIN_DIR "/railyard-sbr";
const std::string kReference = "/usr/lib/cni/sbr";
const std::string kNoRules =
    "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n";

json config(const RailRig& rig, const std::string& type) {
  return {{"cniVersion", "1.0.0"},
          {"name", "rail0"},
          {"type", type},
          {"prevResult", rig.prev_result(0)}};
}

int code_of(const RunResult& r) {
  return r.exit_code == 0 ? 0 : json::parse(r.out).value("code", -1);
}

}  // namespace

TEST_CASE(
    "second ADD: the reference fails and leaves a duplicate rule, railyard-sbr keeps one copy",
    "[sbr][reference][netns]") {
  for (const std::string& bin : {kReference, kOurs}) {
    RailRig rig(1, RailLayout::kSubnetPerRailV4);
    const json cfg = config(rig, bin == kOurs ? "railyard-sbr" : "sbr");
    REQUIRE(run_plugin(bin, "ADD", rig.pod.path(), "net1", cfg).exit_code == 0);
    auto second = run_plugin(bin, "ADD", rig.pod.path(), "net1", cfg);
    const std::string rules = rig.pod.ip("rule");
    if (bin == kReference) {
      // It moved the subnet route out of main, so the gateway is unreachable for the new table;
      // the rule it added first stays.
      CHECK(code_of(second) == 999);
      CHECK_THAT(second.out, Catch::Contains("Failed to add default route to 10.10.0.1"));
      CHECK(rules ==
            "0:\tfrom all lookup local\n32764:\tfrom 10.10.0.2 lookup 101\n32765:\tfrom 10.10.0.2 "
            "lookup 100\n"
            "32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n");
    } else {
      CHECK(code_of(second) == 0);
      CHECK(rules ==
            "0:\tfrom all lookup local\n1000:\tfrom 10.10.0.2 lookup 100\n"
            "32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n");
    }
  }
}

TEST_CASE(
    "DEL after the interface is gone, and a second DEL: the reference fails, railyard-sbr succeeds",
    "[sbr][reference][netns]") {
  for (const std::string& bin : {kReference, kOurs}) {
    RailRig rig(1, RailLayout::kSubnetPerRailV4);
    const json cfg = config(rig, bin == kOurs ? "railyard-sbr" : "sbr");
    REQUIRE(run_plugin(bin, "ADD", rig.pod.path(), "net1", cfg).exit_code == 0);
    rig.pod.ip("link del net1");
    auto first = run_plugin(bin, "DEL", rig.pod.path(), "net1", cfg);
    auto second = run_plugin(bin, "DEL", rig.pod.path(), "net1", cfg);
    INFO(bin << ": " << first.out << second.out);
    if (bin == kReference) {
      CHECK(code_of(first) == 999);
      CHECK_THAT(first.out, Catch::Contains("Failed to get link net1"));
      CHECK(code_of(second) == 999);
      CHECK(rig.pod.ip("rule") != kNoRules);  // its rule is left behind
    } else {
      CHECK(code_of(first) == 0);
      CHECK(code_of(second) == 0);
      CHECK(rig.pod.ip("rule") == kNoRules);
    }
  }
}

TEST_CASE(
    "DEL on a namespace that is gone: the reference fails and leaves a file there, railyard-sbr "
    "succeeds",
    "[sbr][reference][netns]") {
  RailRig rig(1, RailLayout::kSubnetPerRailV4);
  const std::string gone = "/var/run/netns/ry" + std::to_string(::getpid()) + "-gone";
  struct RemoveAfter {
    std::string path;
    ~RemoveAfter() { std::filesystem::remove(path); }
  } cleanup{gone};
  auto ours = run_plugin(kOurs, "DEL", gone, "net1", config(rig, "railyard-sbr"));
  CHECK(code_of(ours) == 0);
  CHECK(ours.out.empty());
  CHECK_FALSE(std::filesystem::exists(gone));
  auto ref = run_plugin(kReference, "DEL", gone, "net1", config(rig, "sbr"));
  CHECK(code_of(ref) == 999);
  // Its lock opened the path with O_CREAT: an empty file now stands where the namespace was.
  CHECK(std::filesystem::is_regular_file(gone));
  // Which is no namespace, so railyard-sbr's DEL still succeeds.
  CHECK(code_of(run_plugin(kOurs, "DEL", gone, "net1", config(rig, "railyard-sbr"))) == 0);
}

TEST_CASE("CHECK: the reference passes whatever the state, railyard-sbr verifies it",
          "[sbr][reference][netns]") {
  for (const std::string& bin : {kReference, kOurs}) {
    RailRig rig(1, RailLayout::kSubnetPerRailV4);
    const json cfg = config(rig, bin == kOurs ? "railyard-sbr" : "sbr");
    REQUIRE(run_plugin(bin, "ADD", rig.pod.path(), "net1", cfg).exit_code == 0);
    CHECK(code_of(run_plugin(bin, "CHECK", rig.pod.path(), "net1", cfg)) == 0);  // right after ADD
    rig.pod.ip("rule flush");  // drops every non-default rule: SBR is gone
    auto r = run_plugin(bin, "CHECK", rig.pod.path(), "net1", cfg);
    if (bin == kReference) {
      CHECK(code_of(r) == 0);
    } else {
      CHECK(code_of(r) == 100);
      CHECK_THAT(r.out, Catch::Contains("no source rule for 10.10.0.2"));
    }
  }
}

TEST_CASE(
    "no gateway from IPAM: the reference leaves the source without a way out, railyard-sbr routes "
    "it on its rail",
    "[sbr][reference][netns]") {
  const auto remote = *railyard::net::IpAddress::parse("10.99.0.1");
  for (const std::string& bin : {kReference, kOurs}) {
    RailRig rig(2, RailLayout::kOneSubnetV4);
    for (int k = 0; k < 2; ++k) {
      json cfg = {{"cniVersion", "1.0.0"},
                  {"name", "rail"},
                  {"type", bin == kOurs ? "railyard-sbr" : "sbr"},
                  {"prevResult", rig.prev_result(k)}};
      if (bin == kOurs) cfg["rail"] = k;
      REQUIRE(run_plugin(bin, "ADD", rig.pod.path(), rig.rails[k].ifname, cfg).exit_code == 0);
    }
    if (bin == kReference) {
      CHECK_THROWS_WITH(rig.which_peer_receives_from(1, remote),
                        Catch::Contains("Network is unreachable"));
    } else {
      CHECK(rig.which_peer_receives_from(0, remote) == 0);
      CHECK(rig.which_peer_receives_from(1, remote) == 1);
    }
  }
}

TEST_CASE(
    "the main table: the reference moves the interface's routes out of it, railyard-sbr leaves it",
    "[sbr][reference][netns]") {
  for (const std::string& bin : {kReference, kOurs}) {
    RailRig rig(1, RailLayout::kSubnetPerRailV4);
    const std::string before = rig.pod.ip("route show table main");
    REQUIRE(before == "10.10.0.0/24 dev net1 proto kernel scope link src 10.10.0.2\n");
    REQUIRE(run_plugin(bin, "ADD", rig.pod.path(), "net1",
                       config(rig, bin == kOurs ? "railyard-sbr" : "sbr"))
                .exit_code == 0);
    CHECK(rig.pod.ip("route show table main") == (bin == kReference ? "" : before));
  }
}
