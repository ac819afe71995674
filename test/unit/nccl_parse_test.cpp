// railyard-validate parse on every generation of nccl-tests output, each field checked.
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <sstream>

#include "nccl-tests-wrapper/nccl/parse.h"

using namespace railyard::validate;

namespace {

std::string sample_text(const std::string& name) {
  std::ifstream in(std::string(RAILYARD_FIXTURES_DIR) + "/nccl-tests/" + name);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ParseResult parse_sample(const std::string& name) {
  return parse_nccl_tests(sample_text(name));
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
  CHECK_FALSE(truncated.complete);
  CHECK_THAT(truncated.errors.at(0), Catch::Contains("cut short after 0 rows"));
}

TEST_CASE("nccl-tests -J JSON: errors [\"\"] is no error, and cut short it keeps its complete rows",
          "[validate][parse]") {
  const std::string text = sample_text("result.json");
  std::string clean = text;
  clean.replace(clean.find("\"errors\": []"), 12, "\"errors\": [\"\"]");
  auto r = parse_nccl_tests(clean);
  CHECK(r.complete);
  CHECK(r.errors.empty());
  // Cut in the middle of the second row: the first survives whole.
  const std::string cut = text.substr(0, text.find("\"in_place\": {\"time\": 4560.2"));
  r = parse_nccl_tests(cut);
  CHECK_FALSE(r.complete);
  REQUIRE(r.rows.size() == 1);
  check_placement(r.rows[0].out_of_place, 38.52, 27.22, 47.64, 0.0);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0] == "JSON output is cut short after 1 rows (the run stopped while writing it)");
}

TEST_CASE("2017-2019 output: bytes/N/op header, times in ms, res, a footer without '#'",
          "[validate][parse]") {
  auto r = parse_sample("v2017.txt");
  CHECK(r.format == "2017");
  CHECK(r.complete);
  CHECK(r.errors.empty());
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[1].size == 1048576);
  CHECK(r.rows[1].count == 262144);
  CHECK(r.rows[1].redop == "sum");
  CHECK_FALSE(r.rows[1].root);
  check_placement(r.rows[1].out_of_place, 105.0, 9.99, 9.99, 1e-07);
  check_placement(r.rows[1].in_place, 104.0, 10.08, 10.08, 1e-07);
  CHECK(r.out_of_bounds == 0);
  CHECK(r.avg_busbw == Approx(5.0175));
}

namespace {

// Every line of `text` with `prefix(line number)` in front, as a launcher or collector writes it.
template <class F>
std::string prefixed(const std::string& text, F prefix) {
  std::istringstream in(text);
  std::string out;
  int n = 0;
  for (std::string line; std::getline(in, line);) out += prefix(n++) + line + "\n";
  return out;
}

}  // namespace

TEST_CASE("launcher and log prefixes: kubectl logs, srun -l, MPICH -prepend-rank",
          "[validate][parse]") {
  const std::string plain = sample_text("v2021.txt");
  const auto expected = to_json(parse_nccl_tests(plain));
  REQUIRE(expected["rows"].size() == 3);
  const std::vector<std::pair<std::string, std::function<std::string(int)>>> cases = {
      {"kubectl logs --timestamps", [](int) { return "2026-12-03T13:14:12.123456789Z "; }},
      {"kubectl logs --prefix", [](int) { return "[pod/validate-0-x7k2p/bench] "; }},
      {"kubectl logs --prefix --timestamps",
       [](int) { return "[pod/validate-0-x7k2p/bench] 2026-12-03T13:14:12.5+01:00 "; }},
      {"srun -l", [](int) { return "0: "; }},
      {"srun -l, 16 tasks", [](int n) { return n % 2 ? " 3: " : "12: "; }},
      {"MPICH -prepend-rank", [](int) { return "[0] "; }},
      {"mpirun --tag-output under kubectl --timestamps",
       [](int) { return "2026-12-03T13:14:12Z [1,0]<stdout>:"; }},
  };
  for (const auto& [name, prefix] : cases) {
    INFO(name);
    const auto got = to_json(parse_nccl_tests(prefixed(plain, prefix)));
    CHECK(got == expected);
  }
}

TEST_CASE("an NCCL line inside a row: the row put back together", "[validate][parse]") {
  // nccl-tests prints a row in several printf calls; NCCL's threads can write in between.
  std::string text = sample_text("v2021.txt");
  const std::string row_start = "    16777216       4194304     float     sum      -1";
  const size_t at = text.find(row_start) + row_start.size();
  text.insert(at, "node-a:6899:6950 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read\n");
  auto r = parse_nccl_tests(text);
  CHECK(r.complete);
  CHECK(r.errors.empty());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[1].size == 16777216);
  check_placement(r.rows[1].out_of_place, 148.9, 112.66, 197.16, 0.0);
  check_placement(r.rows[1].in_place, 147.5, 113.74, 199.05, 0.0);
  // Under srun -l, each piece carries its prefix.
  r = parse_nccl_tests(prefixed(text, [](int) { return "0: "; }));
  CHECK(r.complete);
  CHECK(r.rows.size() == 3);
}

TEST_CASE("a row that cannot be put back: not complete, the line named", "[validate][parse]") {
  std::string text = sample_text("v2021.txt");
  const std::string row_start = "    16777216       4194304     float     sum      -1";
  const size_t at = text.find(row_start) + row_start.size();
  // The rest of the row never comes: the process printing it died mid-row.
  const size_t eol = text.find('\n', at);
  text.replace(at, eol - at, "node-a:6899:6950 [0] NCCL WARN NET/IB : Got completion with error");
  auto r = parse_nccl_tests(text);
  CHECK_FALSE(r.complete);
  CHECK(r.rows.size() == 2);
  REQUIRE_FALSE(r.errors.empty());
  CHECK(r.errors[0] ==
        "line 11: a results row cut short by other output: '16777216       4194304     float     "
        "sum      -1'");
  // Cut at the end of the output, the same.
  text = sample_text("v2021.txt");
  text = text.substr(0, text.find(row_start) + row_start.size());
  r = parse_nccl_tests(text);
  CHECK_FALSE(r.complete);
  CHECK_THAT(r.errors.at(0), Catch::StartsWith("line 11: a results row cut short"));
}

TEST_CASE("a row broken by a bare newline is joined again", "[validate][parse]") {
  std::string text = sample_text("v2021.txt");
  const std::string row_start = "    16777216       4194304     float     sum      -1    148.9";
  text.insert(text.find(row_start) + row_start.size(), "\n");
  auto r = parse_nccl_tests(text);
  CHECK(r.complete);
  CHECK(r.errors.empty());
  REQUIRE(r.rows.size() == 3);
  check_placement(r.rows[1].out_of_place, 148.9, 112.66, 197.16, 0.0);
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

TEST_CASE("values out of range or of the wrong type: errors named, never a crash",
          "[validate][parse]") {
  const std::string head =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  auto text = parse_nccl_tests(head +
                               "99999999999999999999 4 float sum -1 10.0 1.0 1.0 0 10.0 1.0 1.0 0\n"
                               "8 2 float sum 99999999999 10.0 1.0 1.0 0 10.0 1.0 1.0 0\n");
  REQUIRE(text.rows.size() == 1);
  CHECK_FALSE(text.rows[0].root);  // a root that is no int is left unset
  REQUIRE_FALSE(text.errors.empty());
  CHECK_THAT(text.errors.at(0), Catch::Contains("line 2: a size out of range"));

  auto json_rows = parse_nccl_tests(
      R"({"results": [{"size": "8", "count": 2}, {"size": 99999999999999999999, "count": 2},
                      {"size": 8, "count": 2, "type": 5}, {"size": 8, "count": 2, "root": "x"}],
          "out_of_bounds": {"count": "many"},
          "average_bus_bandwidth": {"bandwidth": "fast"}, "errors": "none"})");
  REQUIRE(json_rows.rows.size() == 1);  // the last: a root that is no int is left unset
  CHECK_FALSE(json_rows.rows[0].root);
  CHECK_FALSE(json_rows.avg_busbw);
  CHECK_FALSE(json_rows.complete);
  REQUIRE(json_rows.errors.size() >= 4);
  CHECK_THAT(json_rows.errors.at(0), Catch::Contains("results[0]: 'size' is not an integer"));
  CHECK_THAT(json_rows.errors.at(1), Catch::Contains("results[1]: 'size' is not an integer"));
  CHECK_THAT(json_rows.errors.at(2), Catch::Contains("results[2]: 'type' is not a string"));
  CHECK_THAT(json_rows.errors.at(3), Catch::Contains("out_of_bounds: 'count'"));
}
