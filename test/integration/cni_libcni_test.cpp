// railyard-cni and railyard-sbr chained in one conflist, driven by libcni as runtimes drive them.
#include <catch2/catch.hpp>
#include <fstream>

#include "test/support/cni_rig.h"

using namespace railyard::testing;
using nlohmann::json;

namespace {

RunResult libcni(const CniRig& rig, const std::string& command, const TestNetns& pod, int rail) {
  return run(
      {"ip", "netns", "exec", rig.node.name(), RAILYARD_BIN_DIR "/libcni-driver", command,
       (rig.dir.path() / ("rail" + std::to_string(rail) + ".conflist")).string(), pod.path(),
       "pod-" + pod.name(), "net" + std::to_string(rail + 1),
       std::string(RAILYARD_BIN_DIR) + ":/usr/lib/cni", (rig.dir.path() / "libcni-cache").string()},
      {{"RAILYARD_SYSFS_ROOT", (rig.dir.path() / "root").string()},
       {"RAILYARD_RAILS_FILE", (rig.dir.path() / "rails.json").string()},
       {"RAILYARD_CNI_POLICY", rig.policy_file()}});
}

}  // namespace

TEST_CASE("a conflist [railyard-cni, railyard-sbr] per rail: ADD, CHECK and DEL through libcni",
          "[cni][libcni][netns]") {
  CniRig rig(2);
  TestNetns pod("pod");
  const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
  for (int k = 0; k < 2; ++k) {
    json cni = rig.config(k);
    cni.erase("cniVersion");
    cni.erase("name");
    cni["sbr"] = false;  // railyard-sbr does it, second in the list
    const json conflist = {{"cniVersion", "1.0.0"},
                           {"name", "rail" + std::to_string(k)},
                           {"plugins", {cni, {{"type", "railyard-sbr"}, {"rail", k}}}}};
    std::ofstream(rig.dir.path() / ("rail" + std::to_string(k) + ".conflist")) << conflist.dump(2);
  }
  for (int k = 0; k < 2; ++k) {
    auto r = libcni(rig, "ADD", pod, k);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json res = json::parse(r.out);
    const std::string n = std::to_string(k);
    CHECK(res["interfaces"][0]["name"] == "net" + std::to_string(k + 1));
    CHECK(res["interfaces"][0]["sandbox"] == pod.path());
    CHECK(res["ips"][0]["address"] == "10.10." + n + ".2/24");
    CHECK(pod.ip("rule show priority " + std::to_string(1000 + k)) ==
          std::to_string(1000 + k) + ":\tfrom 10.10." + n + ".2 lookup " + std::to_string(100 + k) +
              "\n");
  }
  for (int k = 0; k < 2; ++k) {
    auto r = libcni(rig, "CHECK", pod, k);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
  }
  pod.ip("rule del priority 1001");
  auto broken = libcni(rig, "CHECK", pod, 1);
  CHECK(broken.exit_code == 1);
  CHECK_THAT(broken.err, Catch::Contains("missing rule 'from 10.10.1.2 lookup 101 priority 1001'"));
  for (int k = 0; k < 2; ++k) {
    auto r = libcni(rig, "DEL", pod, k);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
  }
  CHECK(rig.node_links() == node_before);
  CHECK(CniRig::snapshot(pod) == pod_before);
}
