// The firmware check, the proof of checks/check.h's shape: every rail NIC on one firmware (and
// board), the config's version when it names one; and the check table it was added to.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "nccl-tests-wrapper/checks/check.h"
#include "nccl-tests-wrapper/run/config.h"
#include "test/fixturegen/fixture.h"
#include "test/support/temp_dir.h"
#include "topology/discover/discover.h"

using namespace railyard::validate;
using nlohmann::json;
using railyard::testing::TempDir;
namespace topo = railyard::topology;

namespace {

// Four GPU+NIC pairs, one per switch; nic_extra[k] (an object; {} is null: nothing) is added to
// NIC k's description.
json four_rails(const std::vector<json>& nic_extra) {
  json bridges = json::array();
  for (int k = 0; k < 4; ++k) {
    json nic = {{"rdma", "mlx5_" + std::to_string(k)}, {"netdev", "ib" + std::to_string(k)}};
    if (static_cast<size_t>(k) < nic_extra.size() && nic_extra[static_cast<size_t>(k)].is_object())
      nic.update(nic_extra[static_cast<size_t>(k)]);
    char id[16];
    std::snprintf(id, sizeof id, "0000:%02x", 0x10 * (k + 1));
    bridges.push_back(
        {{"id", id},
         {"numa", 0},
         {"ports", {{{"switch", {{"ports", {{{"gpu", json::object()}}, {{"nic", nic}}}}}}}}}});
  }
  return {{"host_bridges", bridges}};
}

struct Node {
  TempDir dir;
  topo::Node node;
  explicit Node(const json& desc) {
    railyard::fixture::generate(desc, dir.path());
    node = topo::discover(topo::Sysfs(dir.path()), topo::RailsConfig{});
  }
  std::vector<Finding> firmware(const Checks& settings = {}) const {
    const topo::Sysfs sysfs(dir.path());
    std::vector<Finding> out;
    firmware_check().at_rest(NodeView{node, sysfs, settings}, out);
    return out;
  }
};

}  // namespace

TEST_CASE("firmware: every rail on one version and board passes, each rail named",
          "[validate][firmware]") {
  Node n(four_rails({}));
  const auto out = n.firmware();
  REQUIRE(out.size() == 4);
  for (int k = 0; k < 4; ++k) {
    CHECK(out[static_cast<size_t>(k)].ok());
    CHECK(out[static_cast<size_t>(k)].rail == k);
    CHECK(out[static_cast<size_t>(k)].check == "firmware");
  }
  CHECK(out[0].detail == "firmware 28.39.1002 (board MT_0000000838), as 4 of 4 rails");
  CHECK(out[0].evidence["fw_ver"] == "28.39.1002");
}

TEST_CASE("firmware: the rail left behind by an update fails, the others pass",
          "[validate][firmware]") {
  Node n(four_rails({{}, {}, {{"fw_ver", "28.36.1010"}}, {}}));
  const auto out = n.firmware();
  REQUIRE(out.size() == 4);
  CHECK(out[0].ok());
  CHECK(out[2].fails());
  CHECK(out[2].subject == "rail 2 (mlx5_2)");
  CHECK(out[2].detail ==
        "firmware 28.36.1010 (board MT_0000000838), but 3 of 4 rails run 28.39.1002 (board "
        "MT_0000000838)");
}

TEST_CASE("firmware: another board on one rail is a mismatch even on the same version",
          "[validate][firmware]") {
  Node n(four_rails({{{"board_id", "MT_0000000970"}}}));
  const auto out = n.firmware();
  CHECK(out[0].fails());
  CHECK(out[1].ok());
}

TEST_CASE("firmware: with no majority every rail fails and the split is shown",
          "[validate][firmware]") {
  Node n(four_rails(
      {{{"fw_ver", "1.0"}}, {{"fw_ver", "1.0"}}, {{"fw_ver", "2.0"}}, {{"fw_ver", "2.0"}}}));
  const auto out = n.firmware();
  for (const auto& f : out) CHECK(f.fails());
  CHECK(out[0].detail.find("no majority (1.0 (board MT_0000000838) on 2, 2.0 (board "
                           "MT_0000000838) on 2)") != std::string::npos);
}

TEST_CASE("firmware: the config's version is the one every rail must run", "[validate][firmware]") {
  Node n(four_rails({}));
  Checks named;
  named.firmware_version = "28.40.1000";
  for (const auto& f : n.firmware(named)) {
    CHECK(f.fails());
    CHECK(f.detail == "firmware 28.39.1002 (board MT_0000000838), the config names 28.40.1000");
  }
  named.firmware_version = "28.39.1002";
  for (const auto& f : n.firmware(named)) CHECK(f.ok());
}

TEST_CASE("firmware: a driver that shows no fw_ver is unknown, not failed",
          "[validate][firmware]") {
  Node n(four_rails({{{"fw_ver", nullptr}, {"board_id", nullptr}}}));
  const auto out = n.firmware();
  CHECK(out[0].unknown());
  CHECK(out[0].detail == "the driver shows no fw_ver");
  CHECK(out[1].ok());
  CHECK(out[1].detail == "firmware 28.39.1002 (board MT_0000000838), as 3 of 3 rails");
}

TEST_CASE("check table: each row's findings carry its name, and only enabled rows run",
          "[validate][checks]") {
  Node n(four_rails({}));
  const topo::Sysfs sysfs(n.dir.path());
  Checks all;
  all.expected_rate_gbps = 400;
  all.fabric_mtu = 0;
  all.min_mtu = 1500;
  all.gpu_direct = "require";
  for (const auto& row : check_table()) {
    std::vector<Finding> out;
    row.check.at_rest(NodeView{n.node, sysfs, all}, out);
    for (const auto& f : out) CHECK((f.check == row.name || std::string(row.name) == "path"));
  }
  Checks none;
  none.port_active = none.pcie_not_degraded = none.roce_gid = none.roce_qos = none.pcie_acs =
      none.port_errors = none.link_flaps = none.nccl_path = none.firmware = false;
  none.fabric_mtu = 0;
  none.gpu_direct = "off";
  // The path of each GPU to its NIC is always judged: the one row no setting turns off.
  CHECK(enabled_checks(none).size() == 1);
  CHECK(enabled_checks(Checks{}).size() == check_table().size() - 1);  // no expected rate
}

TEST_CASE("firmware: the config turns it off or names the version, and nothing else",
          "[validate][firmware]") {
  CHECK(Config::parse(json::object()).checks.firmware);
  CHECK_FALSE(Config::parse({{"checks", {{"firmware", false}}}}).checks.firmware);
  const Config named = Config::parse({{"checks", {{"firmware", {{"version", "28.39.1002"}}}}}});
  CHECK(named.checks.firmware);
  CHECK(named.checks.firmware_version == "28.39.1002");
  CHECK_THROWS_WITH(Config::parse({{"checks", {{"firmware", {{"board", "MT_1"}}}}}}),
                    Catch::Contains("checks.firmware: unknown field 'board'"));
  CHECK_THROWS_WITH(Config::parse({{"checks", {{"firmware", {{"version", ""}}}}}}),
                    Catch::Contains("checks.firmware.version must be a version of 1 to 64"));
  CHECK_THROWS_WITH(Config::parse({{"checks", {{"firmware", "28.39"}}}}),
                    Catch::Contains("checks.firmware must be true, false or an object"));
}
