// railyard-validate run on a simulated node with a stand-in all_reduce_perf printing a chosen
// output per rail: the verdict, the exit code, and which rail is named.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test/support/fixture_node.h"
#include "test/support/run.h"

using namespace railyard::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kValidate = RAILYARD_BIN_DIR "/railyard-validate";
const std::string kStandin =
    std::string(RAILYARD_FIXTURES_DIR) + "/nccl-tests/standin_all_reduce_perf.sh";

// nccl-tests 2.x output with a small row (busbw `small`) and two large rows (busbw `large`).
std::string output(double large, double small = 2.0, int wrong = 0) {
  char buf[2048];
  std::snprintf(buf, sizeof buf,
                "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup "
                "iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
                "#       size         count      type   redop    root     time   algbw   busbw "
                "#wrong     time   algbw   busbw #wrong\n"
                "     1048576        262144     float     sum      -1    900.0    1.10 %7.2f      "
                "0    899.0    1.10 %7.2f      0\n"
                "   268435456      67108864     float     sum      -1   5800.0   46.28 %7.2f      "
                "%d   5790.0   46.36 %7.2f      0\n"
                "  1073741824     268435456     float     sum      -1  23000.0   46.68 %7.2f      "
                "0  22990.0   46.70 %7.2f      0\n"
                "# Out of bounds values : %d %s\n# Avg bus bandwidth    : %.2f\n#\n",
                small, small, large, wrong, large, large, large, wrong, wrong ? "FAILED" : "OK",
                (small + 2 * large) / 3);
  return buf;
}

struct Node {
  GeneratedFixture fx{"dgx-h100"};
  TempDir dir;
  Node() {
    std::ofstream(dir.path() / "rails.json") << R"({"selectors": {"linkTypes": ["infiniband"]}})";
    fs::create_directories(dir.path() / "standin");
    put("default.txt", output(46.0));
    put("all.txt", output(360.0));
  }
  void put(const std::string& name, const std::string& text) const {
    std::ofstream(dir.path() / "standin" / name) << text;
  }
  std::string config(const json& benchmark_extra = json::object()) const {
    json bench = {{"command", kStandin},
                  {"minFractionOfLineRate", 0.8},
                  {"allRailsMinBusbwGbps", 300},
                  {"env", {{"STANDIN_DIR", (dir.path() / "standin").string()}}}};
    bench.update(benchmark_extra);
    const json cfg = {{"sysfsRoot", fx.root().string()},
                      {"railsFile", (dir.path() / "rails.json").string()},
                      {"checks", {{"expectedRateGbps", 400}}},
                      {"benchmark", bench}};
    std::ofstream(dir.path() / "config.json") << cfg.dump();
    return (dir.path() / "config.json").string();
  }
  RunResult validate(const std::string& config) const {
    return run({kValidate, "run", "--config", config, "--report",
                (dir.path() / "report.json").string(), "--junit",
                (dir.path() / "junit.xml").string(), "--node-patch",
                (dir.path() / "patch.json").string()});
  }
  json report() const { return json::parse(std::ifstream(dir.path() / "report.json")); }
  json run_named(const std::string& name) const {
    const json rep = report();  // kept alive: a range-for over report()["runs"] would dangle
    for (const auto& r : rep["runs"])
      if (r["name"] == name) return r;
    FAIL("no run named " << name);
    return {};
  }
};

}  // namespace

TEST_CASE("every rail at line rate: pass, exit 0, node labelled", "[validate][run]") {
  Node n;
  auto r = n.validate(n.config());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("railyard-validate: pass"));
  auto rep = n.report();
  CHECK(rep["verdict"] == "pass");
  REQUIRE(rep["runs"].size() == 9);  // 8 rails and all together
  CHECK(rep["runs"][1]["name"] == "rail 1 (mlx5_3)");
  CHECK(rep["runs"][1]["nccl_ib_hca"] == "=mlx5_3:1");
  CHECK(rep["runs"][1]["cuda_visible_devices"] == "1");
  CHECK(rep["runs"][1]["busbw"] == 46.0);
  CHECK(rep["runs"][8]["name"] == "all rails");
  CHECK(rep["runs"][8]["nccl_ib_hca"] ==
        "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1");
  CHECK(rep["runs"][8]["cuda_visible_devices"] == "0,1,2,3,4,5,6,7");
  // No nvidia_peermem on the simulated node: a warning, not a failure.
  CHECK_THAT(r.out, Catch::Contains("warn  node  gpudirect: nvidia_peermem not loaded"));
  auto patch = json::parse(std::ifstream(n.dir.path() / "patch.json"));
  CHECK(patch["metadata"]["labels"]["railyard.io/validated"] == "true");
  std::stringstream junit;
  junit << std::ifstream(n.dir.path() / "junit.xml").rdbuf();
  CHECK_THAT(junit.str(), Catch::Contains("failures=\"0\""));
}

TEST_CASE("one slow rail: fail, exit 1, the rail named with both reasons", "[validate][run]") {
  Node n;
  n.put("mlx5_9.txt", output(30.0));
  auto r = n.validate(n.config());
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("FAIL  rail 5 (mlx5_9)  30.0 GB/s"));
  auto slow = n.run_named("rail 5 (mlx5_9)");
  CHECK(slow["attempts"] == 2);  // repeated before failing
  CHECK(slow["problems"] ==
        json::array({"busbw 30.0 GB/s below 80.0% of the port's 400.0 Gb/s (40.0 GB/s)",
                     "busbw 30.0 GB/s is 65.2% of the median rail's 46.0 GB/s"}));
  CHECK(n.run_named("rail 4 (mlx5_6)")["ok"] == true);
  auto patch = json::parse(std::ifstream(n.dir.path() / "patch.json"));
  CHECK(patch["metadata"]["labels"]["railyard.io/validated"] == "false");
  CHECK_THAT(patch["metadata"]["annotations"]["railyard.io/validation"].get<std::string>(),
             Catch::Contains("rail 5 (mlx5_9)"));
  std::stringstream junit;
  junit << std::ifstream(n.dir.path() / "junit.xml").rdbuf();
  CHECK_THAT(junit.str(), Catch::Contains("failures=\"1\""));
}

TEST_CASE("all rails judged against the rails alone: one slow rail drags it down, with the reason",
          "[validate][run]") {
  Node n;
  // Rail 5 alone moves 30 GB/s; across all 8 the ring runs at the slowest rail's pace.
  n.put("mlx5_9.txt", output(30.0));
  n.put("all.txt", output(240.0));
  json no_floor = {{"allRailsMinBusbwGbps", nullptr}};
  auto r = n.validate(n.config(no_floor));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const json all = n.run_named("all rails");
  CHECK(all["ok"] == false);
  CHECK(all["problems"] == json::array({"busbw 240.0 GB/s across 8 rails is 65.2% of 8 x the "
                                        "median rail's 46.0 GB/s (368.0 GB/s), expected at "
                                        "least 75.0%"}));
  CHECK_THAT(r.out, Catch::Contains("65.2% of 8 x the median rail's 46.0 GB/s"));
}

TEST_CASE("all rails moving less than one rail fails even when every rail passes alone",
          "[validate][run]") {
  Node n;
  n.put("all.txt", output(40.0));  // the demo's case: 8 rails together below one alone
  SECTION("scale rails (one rank drives every rail)") {
    auto r = n.validate(n.config({{"allRailsMinBusbwGbps", nullptr}}));
    CHECK(r.exit_code == 1);
    CHECK(n.run_named("rail 0 (mlx5_0)")["ok"] == true);
    CHECK_THAT(n.run_named("all rails")["problems"][0].get<std::string>(),
               Catch::Contains("is 10.9% of 8 x the median rail's 46.0 GB/s"));
  }
  SECTION("scale one (one GPU per rail, per-GPU busbw)") {
    // Per GPU, 40 GB/s is 87% of a rail: enough. 30 GB/s is not.
    auto r = n.validate(n.config({{"allRailsMinBusbwGbps", nullptr}, {"allRailsScale", "one"}}));
    INFO(r.out);
    CHECK(r.exit_code == 0);
    n.put("all.txt", output(30.0));
    r = n.validate(n.config({{"allRailsMinBusbwGbps", nullptr}, {"allRailsScale", "one"}}));
    CHECK(r.exit_code == 1);
    CHECK(n.run_named("all rails")["problems"] ==
          json::array({"busbw 30.0 GB/s across 8 rails is 65.2% of the median rail's 46.0 GB/s, "
                       "expected at least 75.0%"}));
  }
}

TEST_CASE("#wrong elements fail the rail", "[validate][run]") {
  Node n;
  n.put("mlx5_4.txt", output(46.0, 2.0, 7));
  auto r = n.validate(n.config());
  CHECK(r.exit_code == 1);
  auto bad = n.run_named("rail 2 (mlx5_4)");
  CHECK(bad["problems"] == json::array({"7 out-of-bounds values", "#wrong 7 at 268435456 bytes"}));
}

TEST_CASE("a crashed run fails the rail", "[validate][run]") {
  Node n;
  std::stringstream crashed;
  crashed << std::ifstream(std::string(RAILYARD_FIXTURES_DIR) + "/nccl-tests/crashed.txt").rdbuf();
  n.put("mlx5_5.txt", crashed.str());
  n.put("mlx5_5.exit", "1\n");
  auto r = n.validate(n.config());
  CHECK(r.exit_code == 1);
  auto bad = n.run_named("rail 3 (mlx5_5)");
  REQUIRE(bad["problems"].size() == 2);
  CHECK(bad["problems"][0] == "exited with 1");
  CHECK_THAT(bad["problems"][1].get<std::string>(),
             Catch::StartsWith("did not finish: node-d: Test NCCL failure"));
}

TEST_CASE("a run that fails before its table: the report quotes its last line", "[validate][run]") {
  Node n;
  n.put("mlx5_5.txt", "starting\nrailyard-bench: rank 1 never joined within 60 s\n\n");
  n.put("mlx5_5.exit", "2\n");
  auto r = n.validate(n.config());
  CHECK(r.exit_code == 1);
  auto bad = n.run_named("rail 3 (mlx5_5)");
  CHECK(bad["problems"] ==
        json::array({"exited with 2", "did not finish: no nccl-tests results header found",
                     "it said: railyard-bench: rank 1 never joined within 60 s"}));
  CHECK_THAT(r.out, Catch::Contains("it said: railyard-bench: rank 1 never joined"));
}

TEST_CASE("rank 1 of an Indexed Job: its benchmark prints no table, rank 0 measures",
          "[validate][run]") {
  Node n;
  n.put("default.txt", "");  // as nccl-tests and railyard-bench do on every rank but 0
  n.put("all.txt", "");
  auto quiet = run({kValidate, "run", "--config", n.config(), "--report",
                    (n.dir.path() / "report.json").string()},
                   {{"JOB_COMPLETION_INDEX", "1"}});
  CHECK(quiet.exit_code == 0);
  CHECK_THAT(quiet.out, Catch::Contains("ok    rail 0 (mlx5_0)  ran; measured by rank 0"));
  CHECK(n.run_named("rail 0 (mlx5_0)")["measured_by_rank0"] == true);
  // Rank 0 itself must see the table: the same silence fails there.
  auto rank0 = n.validate(n.config());
  CHECK(rank0.exit_code == 1);
  CHECK(n.run_named("rail 0 (mlx5_0)")["problems"] ==
        json::array({"did not finish: no nccl-tests results header found"}));
  // And on rank 1 a benchmark that fails still fails the rail.
  n.put("mlx5_5.txt", "railyard-bench: lost rank 0 (rail 0): Connection timed out\n");
  n.put("mlx5_5.exit", "1\n");
  auto failed = run({kValidate, "run", "--rank", "1", "--config", n.config(), "--report",
                     (n.dir.path() / "report.json").string()});
  CHECK(failed.exit_code == 1);
  CHECK(n.run_named("rail 3 (mlx5_5)")["problems"][0] == "exited with 1");
}

TEST_CASE("a sweep whose average is low but whose large rows pass: pass", "[validate][run]") {
  Node n;
  n.put("default.txt", output(46.0, 0.05));  // small messages are latency-bound
  auto r = n.validate(n.config());
  CHECK(r.exit_code == 0);
  CHECK(n.run_named("rail 0 (mlx5_0)")["avg_busbw"].get<double>() < 31.0);
}

TEST_CASE("a rail that fails once and then passes: pass after a repeat", "[validate][run]") {
  Node n;
  n.put("mlx5_3.flaky", output(12.0));
  auto r = n.validate(n.config());
  CHECK(r.exit_code == 0);
  auto flaky = n.run_named("rail 1 (mlx5_3)");
  CHECK(flaky["attempts"] == 2);
  CHECK(flaky["ok"] == true);
}

TEST_CASE("node checks on a degraded node name the rails, without a benchmark", "[validate][run]") {
  GeneratedFixture fx("degraded");
  TempDir dir;
  const json cfg = {{"sysfsRoot", fx.root().string()},
                    {"checks", {{"expectedRateGbps", 400}, {"minMtu", 4092}}}};
  std::ofstream(dir.path() / "c.json") << cfg.dump();
  std::ofstream(dir.path() / "rails.json") << "{}";
  auto r = run({kValidate, "run", "--config", (dir.path() / "c.json").string(), "--rails",
                (dir.path() / "rails.json").string()});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("FAIL  rail 0 (mlx5_0)  pcie: PCIe x8/x16 32.0 GT/s"));
  CHECK_THAT(r.out, Catch::Contains("FAIL  rail 1 (mlx5_1)  port: port 1 DOWN (Disabled)"));
  CHECK_THAT(r.out, Catch::Contains("ok    rail 1 (mlx5_1)  roce-gid: RoCE v2 GID present"));
  // RoCE: the port MTU follows from the netdev's; InfiniBand: only the device can say.
  CHECK_THAT(r.out, Catch::Contains("ok    rail 1 (mlx5_1)  mtu: netdev MTU 9000, port MTU 4096 "
                                    "(derived from the netdev), fabric 4096"));
  CHECK_THAT(r.out,
             Catch::Contains("??    rail 0 (mlx5_0)  mtu: unknown: netdev MTU 4092, port MTU "
                             "unknown (no verbs device to ask), fabric 4096"));
  // The fixture's RoCE netdev is not in this network namespace: DCB cannot answer for it.
  CHECK_THAT(r.out, Catch::Contains("??    rail 1 (mlx5_1)  roce-qos: unknown: no DCB answer for "
                                    "enp155s0np0 (mlx5_core): no netdev enp155s0np0"));
}

TEST_CASE("counters during the run: symbol errors on one rail, a flap on another, both named",
          "[validate][run]") {
  Node n;
  const auto port = [&](const std::string& dev) {
    return n.fx.sys("class/infiniband/" + dev + "/ports/1/counters/").string();
  };
  // What a bad cable does while all_reduce_perf runs on its rail.
  n.put("mlx5_9.sh", "echo 40 >" + port("mlx5_9") + "symbol_error\n");
  n.put("mlx5_4.sh", "echo 4 >" + n.fx.sys("class/net/ibp76s0/carrier_changes").string() + "\n");
  auto r = n.validate(n.config());
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(
      r.out,
      Catch::Matches("[\\s\\S]*FAIL  rail 5 \\(mlx5_9\\)  port-errors: symbol_error \\+40 \\(0 -> "
                     "40\\) over [0-9.]+ s[\\s\\S]*"));
  CHECK_THAT(r.out,
             Catch::Matches("[\\s\\S]*FAIL  rail 2 \\(mlx5_4\\)  link-flaps: 1 flap\\(s\\) over "
                            "[0-9.]+ s \\(carrier_changes \\+2, link_downed \\+0\\)[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Contains("ok    rail 0 (mlx5_0)  port-errors: no error counter grew"));
  // Benchmarks pass: the counters alone name the rails.
  CHECK(n.run_named("rail 5 (mlx5_9)")["ok"] == true);
  const json rep = n.report();
  bool found = false;
  for (const auto& c : rep["counters"])
    if (c["rail"] == "rail 5 (mlx5_9)") {
      found = true;
      CHECK(c["delta"]["counters/symbol_error"] == 40);
      CHECK(c["delta"]["carrier_changes"] == 0);
    }
  CHECK(found);
  found = false;
  for (const auto& c : rep["checks"])
    if (c["rail"] == "rail 5 (mlx5_9)" && c["check"] == "port-errors") {
      found = true;
      CHECK(c["status"] == "fail");
      CHECK(c["evidence"]["growth"]["symbol_error"] == 40);
      CHECK(c["evidence"]["growth"]["np_cnp_sent"] == 0);
    }
  CHECK(found);
  auto patch = json::parse(std::ifstream(n.dir.path() / "patch.json"));
  CHECK_THAT(patch["metadata"]["annotations"]["railyard.io/validation"].get<std::string>(),
             Catch::Contains("rail 5 (mlx5_9) port-errors: symbol_error +40"));
}

TEST_CASE("nccl-path: one rail fell back to sockets and is named, no INFO lines is unknown",
          "[validate][run]") {
  Node n;
  std::stringstream socket;
  socket << std::ifstream(std::string(RAILYARD_FIXTURES_DIR) + "/nccl-tests/nccl-info-socket.txt")
                .rdbuf();
  n.put("mlx5_3.txt", socket.str());
  auto r =
      n.validate(n.config({{"minFractionOfLineRate", nullptr}, {"minFractionOfMedianRail", 0.0}}));
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("FAIL  rail 1 (mlx5_3)  nccl-path: NCCL used NET/Socket, not "
                                    "NET/IB"));
  CHECK_THAT(r.out,
             Catch::Contains("??    rail 0 (mlx5_0)  nccl-path: unknown: the benchmark printed "
                             "no NCCL INFO lines"));
  std::stringstream junit;
  junit << std::ifstream(n.dir.path() / "junit.xml").rdbuf();
  CHECK_THAT(junit.str(), Catch::Contains("<testcase classname=\"checks.nccl-path\" name=\"rail 1 "
                                          "(mlx5_3)\">\n      <failure message=\"NCCL used "
                                          "NET/Socket"));
  CHECK_THAT(junit.str(), Catch::Contains("<skipped message=\"unknown: the benchmark printed"));
}

TEST_CASE("timeline: every rail's throughput during the all-rail run, a stalled rail flat",
          "[validate][run]") {
  Node n;
  // Seven rails move 1 GB (in 4-byte words) during the run across all rails; mlx5_11 stalls.
  std::string hook;
  for (const char* dev : {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10"})
    hook += "echo 250000000 >" +
            n.fx.sys(std::string("class/infiniband/") + dev + "/ports/1/counters/port_xmit_data")
                .string() +
            "\n";
  n.put("all.sh", hook);
  const std::string svg = (n.dir.path() / "timeline.svg").string();
  auto r = run({kValidate, "run", "--config", n.config(), "--report",
                (n.dir.path() / "report.json").string(), "--timeline", svg});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const json t = n.report()["timeline"];
  REQUIRE(t["rails"].size() == 8);
  CHECK(!t["t"].empty());
  for (const auto& rail : t["rails"]) {
    CHECK(rail["source"] == "port_xmit_data");
    CHECK(rail["gbps"].size() == t["t"].size());
    double peak = 0;
    for (double v : rail["gbps"]) peak = std::max(peak, v);
    if (rail["name"] == "rail 7 (mlx5_11)")
      CHECK(peak == 0);
    else
      CHECK(peak > 0);
  }
  std::stringstream plot;
  plot << std::ifstream(svg).rdbuf();
  CHECK_THAT(plot.str(), Catch::Contains("rail 7 (mlx5_11)"));
  CHECK_THAT(plot.str(), Catch::StartsWith("<svg"));
}

TEST_CASE("could not run: exit 2 with the reason", "[validate][run]") {
  Node n;
  auto missing = n.validate(n.config({{"command", "/nonexistent/all_reduce_perf"}}));
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.out,
             Catch::Contains("could-not-run (could not start /nonexistent/all_reduce_perf)"));
  std::ofstream(n.dir.path() / "bad.json") << R"({"benchmark": {"command": "x", "minBusbw": 3}})";
  auto bad = n.validate((n.dir.path() / "bad.json").string());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("benchmark: unknown field 'minBusbw'"));
  std::ofstream(n.dir.path() / "rails.json", std::ios::trunc)
      << R"({"selectors": {"vendors": ["8086"]}})";
  auto none = n.validate(n.config());
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.out, Catch::Contains("no rails on this node"));
}
