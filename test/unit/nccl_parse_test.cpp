// railyard-validate parse on every generation of nccl-tests output, each field checked.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "nccl-tests-wrapper/parse.h"

using namespace railyard::validate;

namespace {

ParseResult parse_sample(const std::string& name) {
  std::ifstream in(std::string(RAILYARD_FIXTURES_DIR) + "/nccl-tests/" + name);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_nccl_tests(ss.str());
}

void check_placement(const std::optional<Placement>& p, double time, double algbw, double busbw,
                     std::optional<double> wrong) {
  REQUIRE(p);
  CHECK(p->time_us == Approx(time));
  CHECK(p->algbw == Approx(algbw));
  CHECK(p->busbw == Approx(busbw));
  CHECK(p->wrong == wrong);
}

}  // namespace

TEST_CASE("legacy output: error column, no root", "[validate][parse]") {
  auto r = parse_sample("legacy.txt");
  CHECK(r.format == "legacy");
  CHECK(r.complete);
  CHECK(r.errors.empty());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[1].size == 1048576);
  CHECK(r.rows[1].count == 262144);
  CHECK(r.rows[1].type == "float");
  CHECK(r.rows[1].redop == "sum");
  CHECK_FALSE(r.rows[1].root);
  check_placement(r.rows[1].out_of_place, 92.85, 11.29, 19.76, 2e-07);
  check_placement(r.rows[1].in_place, 91.97, 11.40, 19.95, 2e-07);
  check_placement(r.rows[2].out_of_place, 1431.2, 93.78, 164.11, 1e-06);
  CHECK(r.avg_busbw == Approx(61.3517));
  CHECK(r.out_of_bounds == 0);
}

TEST_CASE("2021-2025 output: root, #wrong, exponent-form times", "[validate][parse]") {
  auto r = parse_sample("v2021.txt");
  CHECK(r.format == "2021");
  CHECK(r.complete);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].root == -1);
  check_placement(r.rows[0].out_of_place, 29.74, 0.0, 0.0, 0.0);
  check_placement(r.rows[1].in_place, 147.5, 113.74, 199.05, 0.0);
  CHECK(r.rows[2].size == 8589934592LL);
  CHECK(r.rows[2].count == 2147483648LL);
  check_placement(r.rows[2].out_of_place, 1.2e+05, 71.58, 125.27, 3.0);
  check_placement(r.rows[2].in_place, 1.2e+05, 71.60, 125.30, 0.0);
  CHECK(r.out_of_bounds == 3);
  CHECK(r.avg_busbw == Approx(107.47));
}

TEST_CASE("2025+ output: version, collective, wider columns", "[validate][parse]") {
  auto r = parse_sample("v2025.txt");
  CHECK(r.format == "2025");
  CHECK(r.version == "2.16.3");
  CHECK(r.collective == "all_reduce_perf");
  CHECK(r.complete);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[2].size == 1073741824);
  check_placement(r.rows[2].out_of_place, 4563.1, 235.31, 411.79, 0.0);
  check_placement(r.rows[2].in_place, 4560.2, 235.46, 412.06, 0.0);
  CHECK(r.avg_busbw == Approx(240.11));
}

TEST_CASE("mpirun prefixes, NCCL INFO lines and N/A", "[validate][parse]") {
  auto r = parse_sample("mpirun-info-na.txt");
  CHECK(r.complete);
  CHECK(r.errors.empty());
  REQUIRE(r.rows.size() == 2);
  check_placement(r.rows[1].out_of_place, 60.20, 17.42, 30.48, std::nullopt);
  check_placement(r.rows[1].in_place, 59.90, 17.51, 30.64, std::nullopt);
  CHECK(r.avg_busbw == Approx(15.275));
}

TEST_CASE("a crashed run: the rows it had, its errors, not complete", "[validate][parse]") {
  auto r = parse_sample("crashed.txt");
  CHECK_FALSE(r.complete);
  REQUIRE(r.rows.size() == 1);
  CHECK_FALSE(r.avg_busbw);
  REQUIRE(r.errors.size() == 3);
  CHECK_THAT(r.errors[0], Catch::Contains("Test NCCL failure common.cu:1005"));
  CHECK_THAT(r.errors[1], Catch::Contains("Test failure common.cu:891"));
  CHECK(r.errors[2] == "output ends before the summary: the run crashed or was killed");
}

TEST_CASE("nccl-tests -J JSON output", "[validate][parse]") {
  auto r = parse_sample("result.json");
  CHECK(r.format == "json");
  CHECK(r.complete);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].root == -1);
  check_placement(r.rows[0].out_of_place, 38.52, 27.22, 47.64, 0.0);
  CHECK_FALSE(r.rows[1].out_of_place);
  check_placement(r.rows[1].in_place, 4560.2, 235.46, 412.06, std::nullopt);
  CHECK(r.out_of_bounds == 0);
  CHECK(r.avg_busbw == Approx(240.11));
  auto truncated = parse_nccl_tests("{\"results\": [{\"size\": 8");
  CHECK(truncated.rows.empty());
  CHECK_THAT(truncated.errors.at(0), Catch::Contains("not a complete object"));
}

TEST_CASE("the JSON contract of railyard-validate parse", "[validate][parse]") {
  auto j = to_json(parse_sample("v2021.txt"));
  CHECK(j["rows"][2] ==
        nlohmann::json::parse(R"({"size": 8589934592, "count": 2147483648, "type": "float",
      "redop": "sum", "root": -1,
      "out_of_place": {"time_us": 120000.0, "algbw": 71.58, "busbw": 125.27, "wrong": 3.0},
      "in_place": {"time_us": 120000.0, "algbw": 71.6, "busbw": 125.3, "wrong": 0.0}})"));
  CHECK(j["avg_busbw"] == 107.47);
  CHECK(j["out_of_bounds"] == 3);
  CHECK(j["errors"] == nlohmann::json::array());
  CHECK(to_json(parse_nccl_tests("hello"))["errors"][0] == "no nccl-tests results header found");
}
