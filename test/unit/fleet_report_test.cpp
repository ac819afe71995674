// The fleet report: JSON in DESIGN's shape, a heatmap cell per pair, JUnit, and node patches
// that label the culprits' nodes and taint only where a NIC or node fails.
#include <catch2/catch.hpp>
#include <sstream>

#include "nccl-tests-wrapper/fleet/report.h"

using namespace railyard::validate;

namespace {

FleetReport three_nodes() {
  FleetReport r;
  r.nodes = {"gpu-a", "gpu-b", "gpu-c"};
  r.rails = 2;
  for (int k = 0; k < 2; ++k)
    for (auto [a, b] : {std::pair{0, 1}, {0, 2}, {1, 2}}) r.results.push_back({a, b, k, 10.0});
  r.results[3].busbw.reset();  // rail 1, gpu-a - gpu-b: unreachable
  r.culprits = classify_fleet(3, 2, r.results, {});
  return r;
}

}  // namespace

TEST_CASE("fleet report: JSON names nodes, pairs and culprits", "[validate][fleet]") {
  const auto r = three_nodes();
  REQUIRE(r.culprits.size() == 1);
  const auto j = fleet_json(r);
  CHECK(j["verdict"] == "culprits");
  CHECK(j["pairs"].size() == 6);
  CHECK(j["pairs"][3] ==
        nlohmann::json{{"a", "gpu-a"}, {"b", "gpu-b"}, {"rail", 1}, {"busbw", nullptr}});
  CHECK(j["culprits"][0]["kind"] == "cable");
  CHECK(j["culprits"][0]["node"] == "gpu-a");
  CHECK(j["culprits"][0]["peer"] == "gpu-b");
  CHECK(j["culprits"][0]["rail"] == 1);
  FleetReport healthy = r;
  healthy.culprits.clear();
  CHECK(fleet_json(healthy)["verdict"] == "healthy");
}

TEST_CASE("fleet report: the heatmap has a cell per ordered pair, unreachable in black",
          "[validate][fleet]") {
  const std::string svg = fleet_heatmap_svg(three_nodes(), 1);
  size_t cells = 0;
  for (size_t at = 0; (at = svg.find("<rect x=", at)) != std::string::npos; ++at) ++cells;
  CHECK(cells == 9);
  CHECK_THAT(
      svg, Catch::Contains("fill=\"#202020\" stroke=\"white\"><title>gpu-a - gpu-b: unreachable"));
  CHECK_THAT(svg, Catch::Contains("<title>gpu-b - gpu-c: 10 GB/s"));
}

TEST_CASE("fleet report: patches label both ends of a cable, taint only a failing NIC",
          "[validate][fleet]") {
  const auto cable = fleet_node_patches(three_nodes());
  REQUIRE(cable.size() == 2);
  CHECK(cable[0]["node"] == "gpu-a");
  CHECK(cable[0]["patch"]["metadata"]["labels"]["railyard.io/validated"] == "false");
  CHECK(cable[0]["taint"].is_null());
  FleetReport nic = three_nodes();
  nic.culprits = {{"nic", 2, -1, 0, -1, "node 2 on rail 0: slow"}};
  const auto p = fleet_node_patches(nic);
  REQUIRE(p.size() == 1);
  CHECK(p[0]["taint"] ==
        "kubectl taint nodes gpu-c railyard.io/failing-nic=rail0:NoSchedule --overwrite");
  CHECK_THAT(fleet_junit(nic),
             Catch::Contains("<testcase classname=\"fleet.nic\" name=\"gpu-c\">"));
}

TEST_CASE("fleet report: the slowest pair is a silent one before any number", "[validate][fleet]") {
  CHECK(slowest_pair({}) == nullptr);
  const std::vector<PairResult> r{{0, 1, 0, 5.0}, {0, 2, 0, 2.0}, {1, 2, 0, 7.0}};
  CHECK(slowest_pair(r) == &r[1]);
  const std::vector<PairResult> s{{0, 1, 0, 5.0}, {0, 2, 0, std::nullopt}, {1, 2, 0, 1.0}};
  CHECK(slowest_pair(s) == &s[1]);
  CHECK(gbps_text(0.023912) == "0.02391 GB/s");
}

TEST_CASE("fleet report: a fleet that could not run says why and who never joined",
          "[validate][fleet]") {
  const auto r = fleet_not_run("timed out after 3 s waiting for rank 2 to join the fleet",
                               {"gpu-a", "gpu-b", std::nullopt}, 3);
  CHECK(r.missing == std::vector<int>{2});
  const auto j = fleet_json(r);
  CHECK(j["verdict"] == "could not run");
  CHECK(j["reason"] == "timed out after 3 s waiting for rank 2 to join the fleet");
  CHECK(j["joined"] ==
        nlohmann::json::parse(R"([{"rank": 0, "node": "gpu-a"}, {"rank": 1, "node": "gpu-b"}])"));
  CHECK(j["missing"] == nlohmann::json::array({2}));
  CHECK(j["pairs"].empty());
  CHECK(j["culprits"].empty());
  CHECK(fleet_not_run_text(r) ==
        "timed out after 3 s waiting for rank 2 to join the fleet; joined: rank 0 (gpu-a), rank 1 "
        "(gpu-b); never joined: rank 2");
  const std::string junit = fleet_junit(r);
  CHECK_THAT(junit, Catch::Contains("tests=\"1\" failures=\"0\" errors=\"1\""));
  CHECK_THAT(junit, Catch::Contains("<error message=\"timed out after 3 s waiting for rank 2 to "
                                    "join the fleet; joined: rank 0 (gpu-a), rank 1 (gpu-b); "
                                    "never joined: rank 2\"/>"));
  CHECK(fleet_node_patches(r).empty());  // nobody's fault that rank 0 can name
  // Stopped before the rendezvous opened (bad settings): the reason alone.
  const auto early = fleet_not_run("--mode is pairwise or bisect, not 'x'", {}, 0);
  CHECK(fleet_json(early)["verdict"] == "could not run");
  CHECK(fleet_json(early)["joined"].empty());
  CHECK(fleet_not_run_text(early) == "--mode is pairwise or bisect, not 'x'");
}

TEST_CASE("fleet report: a fleet that ran has no reason and nobody missing", "[validate][fleet]") {
  const auto j = fleet_json(three_nodes());
  CHECK(j["reason"].is_null());
  CHECK(j["missing"].empty());
  CHECK(j["joined"].size() == 3);
  CHECK_THAT(fleet_junit(three_nodes()), Catch::Contains("failures=\"1\" errors=\"0\""));
}

TEST_CASE("fleet report: the nodes whose rail firmware differs from the fleet's majority",
          "[validate][fleet][firmware]") {
  auto r = three_nodes();
  const std::string v39 = "28.39.1002 (board MT_0000000838)",
                    v36 = "28.36.1010 (board MT_0000000838)";
  r.firmware = {{v39, v39}, {v39, v36}, {}};  // gpu-c could not read its node
  const FleetFirmware fw = fleet_firmware(r);
  CHECK(fw.majority == v39);
  CHECK(fw.known == 4);
  REQUIRE(fw.differing.size() == 1);
  CHECK(fw.differing[0].node == 1);
  CHECK(fw.differing[0].rails == std::map<int, std::string>{{1, v36}});
  const auto j = fleet_json(r)["firmware"];
  CHECK(j["majority"] == v39);
  CHECK(j["differing"] ==
        nlohmann::json::parse(R"([{"node": "gpu-b", "rails": {"1": ")" + v36 + R"("}}])"));
  std::ostringstream out;
  print_fleet_summary(r, out);
  CHECK_THAT(out.str(), Catch::Contains("# Firmware : " + v39 +
                                        " on most of 4 rail NICs; nodes on "
                                        "another:\n#   gpu-b rail 1: " +
                                        v36 + "\n"));
  // Half and half: no majority, nobody named as the odd one.
  r.firmware = {{v39}, {v36}, {}};
  CHECK(fleet_firmware(r).majority.empty());
  CHECK(fleet_firmware(r).differing.empty());
  CHECK(fleet_json(r)["firmware"]["majority"].is_null());
  // Nobody could read theirs: the summary says nothing of firmware.
  r.firmware = {{}, {}, {}};
  std::ostringstream quiet;
  print_fleet_summary(r, quiet);
  CHECK_THAT(quiet.str(), !Catch::Contains("Firmware"));
}
