// The rails file: its format, and configurations that do not fit the node.
#include <catch2/catch.hpp>
#include <fstream>

#include "test/support/fixture_node.h"
#include "topology/model/rails.h"

using namespace railyard::topology;
using railyard::testing::GeneratedFixture;
using railyard::testing::TempDir;

namespace {

std::vector<int> rails_for(const Node& node, const std::string& json) {
  return assign_rails(node.nics, parse_rails_config(json, "rails.json"));
}

}  // namespace

TEST_CASE("rails entries that do not fit the node are errors naming the entry",
          "[topology][rails]") {
  GeneratedFixture fx("dgx-h100");
  const Node node = discover_devices(fx.sysfs());
  CHECK_THROWS_WITH(rails_for(node, R"({"rails": ["mlx5_0", "mlx5_99"]})"),
                    "rails.json: rail 1 'mlx5_99' names no RDMA PF on this node");
  CHECK_THROWS_WITH(rails_for(node, R"({"rails": ["mlx5_0", "ibp25s0"]})"),
                    "rails.json: rail 1 'ibp25s0' names a PF that is already a rail");
  CHECK_THROWS_WITH(rails_for(node, R"({"rails": ["mlx5_1"], "selectors": {"linkTypes": ["ib"]}})"),
                    "rails.json: rail 0 'mlx5_1' is left out by the selectors");
  // A VF is not a rail.
  CHECK_THROWS_WITH(rails_for(node, R"({"rails": ["mlx5_12"]})"),
                    "rails.json: rail 0 'mlx5_12' names no RDMA PF on this node");
  CHECK(rails_for(node, R"({"selectors": {"rdmaDevices": ["mlx5_4", "mlx5_0"]}})") ==
        std::vector<int>{0, 4});
  CHECK(rails_for(node, R"({"selectors": {"pfNames": ["ibp59s0"]}})") == std::vector<int>{1});
  CHECK(rails_for(node, R"({"selectors": {"devices": ["101d"]}})") == std::vector<int>{2, 3, 8, 9});
  CHECK(rails_for(node, R"({"selectors": {"vendors": ["8086"]}})").empty());
}

TEST_CASE("malformed rails files are rejected with the reason", "[topology][rails]") {
  CHECK_THROWS_WITH(parse_rails_config("{", "f"), Catch::Contains("f: invalid JSON"));
  // Found by the fuzzer: an overflowing number is out_of_range, not a parse_error.
  CHECK_THROWS_WITH(parse_rails_config("555555555555555e55555555555555555555", "f"),
                    Catch::Contains("f: invalid JSON"));
  CHECK_THROWS_WITH(parse_rails_config("[]", "f"), "f: must be a JSON object");
  CHECK_THROWS_WITH(parse_rails_config(R"({"rail": []})", "f"),
                    "f: unknown field 'rail' (expected 'rails', 'selectors')");
  CHECK_THROWS_WITH(parse_rails_config(R"({"rails": "mlx5_0"})", "f"),
                    "f: 'rails' must be a list of strings");
  CHECK_THROWS_WITH(parse_rails_config(R"({"rails": [""]})", "f"),
                    "f: 'rails' must be a list of non-empty strings");
  CHECK_THROWS_WITH(parse_rails_config(R"({"selectors": {"colour": ["red"]}})", "f"),
                    "f: unknown selector 'colour'");
  CHECK_THROWS_WITH(parse_rails_config(R"({"selectors": {"rootDevices": ["0000:zz:00.0"]}})", "f"),
                    "f: rootDevices: '0000:zz:00.0' is not a PCI address");
  CHECK_THROWS_WITH(parse_rails_config(R"({"selectors": {"vendors": "15b3"}})", "f"),
                    "f: selector 'vendors' must be a list of strings");
}

TEST_CASE("rails file location: flag, then env, then the default, and a missing default is fine",
          "[topology][rails]") {
  CHECK(rails_file_from("/x/rails.json") == "/x/rails.json");
  ::setenv("RAILYARD_RAILS_FILE", "/env/rails.json", 1);
  CHECK(rails_file_from("") == "/env/rails.json");
  ::unsetenv("RAILYARD_RAILS_FILE");
  CHECK(rails_file_from("") == kDefaultRailsFile);

  TempDir dir;
  CHECK(load_rails_config(dir.path() / "absent.json", false).order.empty());
  CHECK_THROWS_WITH(load_rails_config(dir.path() / "absent.json", true),
                    Catch::Contains("cannot read the rails file"));
  std::ofstream(dir.path() / "rails.json") << R"({"rails": ["mlx5_0"]})";
  auto cfg = load_rails_config(dir.path() / "rails.json", true);
  CHECK(cfg.order == std::vector<std::string>{"mlx5_0"});
  CHECK(cfg.source == (dir.path() / "rails.json").string());
}
