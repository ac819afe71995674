// `railyard topo` as an operator runs it.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test/support/fixture_node.h"
#include "test/support/run.h"

using railyard::testing::GeneratedFixture;
using railyard::testing::run;
using railyard::testing::TempDir;

namespace {
const std::string kRailyard = RAILYARD_BIN_DIR "/railyard";
}

TEST_CASE("railyard topo prints the matrix, legend, rails and bundles", "[topology][cli]") {
  GeneratedFixture fx("dgx-h100");
  auto r = run({kRailyard, "topo", "--sysfs-root", fx.root().string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("GPU1   NODE  X     NODE"));
  CHECK_THAT(r.out, Catch::Contains("NIC Legend:"));
  CHECK_THAT(r.out, Catch::Contains("NIC1: mlx5_3 (0000:3b:00.0, ibp59s0)"));
  CHECK_THAT(r.out, Catch::Contains("PIX  = Connection traversing at most a single PCIe bridge"));
  CHECK_THAT(r.out, Catch::Contains("Bundles (GPU -> NIC):"));
  CHECK_THAT(r.out, Catch::Contains("=mlx5_3:1"));
}

TEST_CASE("railyard topo --json follows the contract", "[topology][cli]") {
  GeneratedFixture fx("dgx-h100");
  TempDir dir;
  std::ofstream(dir.path() / "rails.json") << R"({"selectors": {"linkTypes": ["InfiniBand"]}})";
  // The root and the rails file also come from the environment.
  auto r = run({kRailyard, "topo", "--json"},
               {{"RAILYARD_SYSFS_ROOT", fx.root().string()},
                {"RAILYARD_RAILS_FILE", (dir.path() / "rails.json").string()}});
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["gpus"].size() == 8);
  CHECK(j["gpus"][1]["index"] == 1);
  CHECK(j["gpus"][1]["pci"] == "0000:3a:00.0");
  CHECK(j["gpus"][1]["numa"] == 0);
  REQUIRE(j["nics"].size() == 12);
  const auto& nic = j["nics"][1];
  CHECK(nic["pci"] == "0000:3b:00.0");
  CHECK(nic["netdev"] == "ibp59s0");
  CHECK(nic["rdma_device"] == "mlx5_3");
  CHECK(nic["rail"] == 1);
  CHECK(nic["numa"] == 0);
  CHECK(nic["link_layer"] == "InfiniBand");
  CHECK(nic["state"] == "ACTIVE");
  CHECK(nic["rate_gbps"] == 400.0);
  CHECK(j["nics"][2]["rail"].is_null());  // storage NIC left out by the selectors
  REQUIRE(j["nics"][0]["vfs"].size() == 4);
  CHECK(j["nics"][0]["vfs"][0] == nlohmann::json({{"pci", "0000:19:00.2"},
                                                  {"netdev", "ibp25s0v0"},
                                                  {"rdma_device", "mlx5_12"},
                                                  {"uverbs", "/dev/infiniband/uverbs1"}}));
  REQUIRE(j["bundles"].size() == 8);
  CHECK(j["bundles"][1] == nlohmann::json({{"gpu", "0000:3a:00.0"},
                                           {"gpu_index", 1},
                                           {"nic", "0000:3b:00.0"},
                                           {"rdma_device", "mlx5_3"},
                                           {"netdev", "ibp59s0"},
                                           {"rail", 1},
                                           {"path", "PIX"},
                                           {"nccl_path", "PIX"}}));
  // Every pair of GPUs and NIC PFs, both directions.
  REQUIRE(j["matrix"].size() == 20);
  for (const auto& [a, row] : j["matrix"].items()) CHECK(row.size() == 20);
  CHECK(j["matrix"]["0000:3a:00.0"]["0000:3c:00.0"] == "PHB");
  CHECK(j["matrix"]["0000:3c:00.0"]["0000:3a:00.0"] == "PHB");
  CHECK(j["matrix"]["0000:18:00.0"]["0000:9a:00.0"] == "SYS");
  CHECK(j["complete"] == true);
}

TEST_CASE("railyard topo on a host without GPUs or RDMA NICs says so and succeeds",
          "[topology][cli]") {
  TempDir empty;
  std::filesystem::create_directories(empty.path() / "sys/bus/pci/devices");
  auto r = run({kRailyard, "topo", "--sysfs-root", empty.path().string()});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "No NVIDIA GPUs and no RDMA NICs found on this node: nothing to show.\n");
}

TEST_CASE("railyard topo refuses to present a broken sysfs as a topology", "[topology][cli]") {
  GeneratedFixture fx("dgx-h100");
  std::ofstream(fx.sys("bus/pci/devices/0000:19:00.0/class"), std::ios::trunc) << "bogus\n";
  auto r = run({kRailyard, "topo", "--sysfs-root", fx.root().string()});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("error: /sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/"
                                    "0000:17:01.0/0000:19:00.0/class: garbage value 'bogus'"));
  auto j = run({kRailyard, "topo", "--json", "--sysfs-root", fx.root().string()});
  CHECK(j.exit_code == 1);
  CHECK(nlohmann::json::parse(j.out)["complete"] == false);
}

TEST_CASE("railyard topo: a bad rails file is exit 2 with the reason", "[topology][cli]") {
  GeneratedFixture fx("dgx-h100");
  TempDir dir;
  std::ofstream(dir.path() / "rails.json") << R"({"rails": ["mlx5_42"]})";
  auto r = run({kRailyard, "topo", "--sysfs-root", fx.root().string(), "--rails",
                (dir.path() / "rails.json").string()});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("rail 0 'mlx5_42' names no RDMA PF on this node"));
  auto missing = run({kRailyard, "topo", "--sysfs-root", fx.root().string(), "--rails",
                      (dir.path() / "nope.json").string()});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("cannot read the rails file"));
}
