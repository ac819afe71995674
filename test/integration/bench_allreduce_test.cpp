// railyard-bench allreduce over TCP on loopback: every element checked for 2, 3 and 4 ranks, one
// and two rails, odd sizes and both element types; each launcher's environment; a rank killed in
// the middle of the run.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "nccl-tests-wrapper/nccl/parse.h"
#include "rdma/run/launch.h"
#include "rdma/transport/socket.h"
#include "test/support/run.h"
#include "test/support/temp_dir.h"

using namespace railyard::testing;

namespace {

const std::string kBench = RAILYARD_BIN_DIR "/railyard-bench";

int free_port() {
  auto s = railyard::rdma::Socket::listen_on("127.0.0.1", 0);
  return s.local_port();  // closed again here; SO_REUSEADDR lets rank 0 take it
}

// Runs `world` ranks at once; returns each rank's result.
std::vector<RunResult> run_ranks(
    int world, const std::vector<std::string>& args,
    const std::function<std::map<std::string, std::string>(int)>& env_of = nullptr,
    bool rank_flags = true) {
  const std::string rv = "127.0.0.1:" + std::to_string(free_port());
  std::vector<RunResult> results(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      std::vector<std::string> argv = {kBench, "allreduce", "--timeout", "20"};
      if (rank_flags)
        argv.insert(argv.end(), {"--rank", std::to_string(r), "--world-size", std::to_string(world),
                                 "--rendezvous", rv});
      argv.insert(argv.end(), args.begin(), args.end());
      auto env = env_of ? env_of(r) : std::map<std::string, std::string>{};
      for (auto& [k, v] : env)
        if (v == "<rv-port>") v = rv.substr(rv.find(':') + 1);
      results[static_cast<size_t>(r)] = run(argv, env);
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

void check_correct(const std::vector<RunResult>& results, size_t expected_rows) {
  for (size_t r = 0; r < results.size(); ++r) {
    INFO("rank " << r << ": " << results[r].out << results[r].err);
    REQUIRE(results[r].exit_code == 0);
  }
  const auto parsed = railyard::validate::parse_nccl_tests(results[0].out);
  INFO(results[0].out);
  CHECK(parsed.complete);
  CHECK(parsed.out_of_bounds == 0);
  REQUIRE(parsed.rows.size() == expected_rows);
  for (const auto& row : parsed.rows) {
    CHECK(row.out_of_place->wrong == 0.0);
    CHECK(row.in_place->wrong == 0.0);
    CHECK(*row.in_place->busbw >= 0.0);
  }
  for (size_t r = 1; r < results.size(); ++r) CHECK(results[r].out.empty());  // only rank 0 prints
}

}  // namespace

TEST_CASE("allreduce over TCP is exact for 2, 3 and 4 ranks on 1 and 2 rails",
          "[bench][allreduce]") {
  // 12 B to 1.2 MB by 7x: element counts 3, 21, 147, ... divisible neither by ranks nor by rails.
  const std::vector<std::string> sweep = {"-b", "12", "-e", "1200000", "-f", "7",
                                          "-n", "2",  "-w", "1",       "-c", "1"};
  for (int world : {2, 3, 4}) {
    for (const std::string rails : {"127.0.0.1", "127.0.0.1,127.0.0.1"}) {
      INFO(world << " ranks, rails " << rails);
      auto args = sweep;
      args.insert(args.end(), {"--rails", rails});
      check_correct(run_ranks(world, args), 6);
    }
  }
}

TEST_CASE("allreduce over TCP is exact for half, bfloat16 and float on odd sizes",
          "[bench][allreduce]") {
  for (const std::string dtype : {"half", "bfloat16", "float"}) {
    INFO(dtype);
    auto results = run_ranks(3, {"--rails", "127.0.0.1,127.0.0.1", "-d", dtype, "-b", "6", "-e",
                                 "300000", "-f", "9", "-n", "1", "-w", "0", "-c", "1"});
    check_correct(results, 5);  // 6 B to 39 KB by 9x: element counts not divisible by 3 x 2
    CHECK_THAT(results[0].out, Catch::Contains(" " + dtype + "     sum"));
  }
  const auto bad = run({kBench, "allreduce", "--rank", "0", "--world-size", "1", "--rails",
                        "127.0.0.1", "-d", "double"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("float, half, bfloat16 or int32"));
}

TEST_CASE("allreduce over TCP is exact for int32 and prints a per-rail summary",
          "[bench][allreduce]") {
  auto results = run_ranks(3, {"--rails", "lo,127.0.0.1", "-d", "int32", "-b", "4", "-e", "4M",
                               "-f", "16", "-n", "2", "-w", "0"});
  check_correct(results, 6);
  CHECK_THAT(results[0].out, Catch::Contains("#   rail 0  127.0.0.1"));
  CHECK_THAT(results[0].out, Catch::Contains("#   rail 1  127.0.0.1"));
}

TEST_CASE("without --rails, the rails are NCCL_IB_HCA's RDMA devices, through their netdevs",
          "[bench][allreduce]") {
  // A node whose RDMA device has "lo" as netdev: both rails (the same device twice, with and
  // without a port) resolve to 127.0.0.1.
  TempDir dir;
  std::ofstream(dir.path() / "node.json")
      << R"({"host_bridges": [{"id": "0000:10", "numa": 0, "ports": [
           {"nic": {"rdma": "mlx5_0", "netdev": "lo"}}]}]})";
  REQUIRE(run({RAILYARD_BIN_DIR "/railyard-fixture", (dir.path() / "node.json").string(),
               (dir.path() / "root").string()})
              .exit_code == 0);
  const std::map<std::string, std::string> env = {
      {"RAILYARD_SYSFS_ROOT", (dir.path() / "root").string()}, {"NCCL_IB_HCA", "=mlx5_0:1,mlx5_0"}};
  auto results = run_ranks(2, {"-b", "1K", "-e", "64K", "-f", "8", "-n", "1", "-w", "0", "-c", "1"},
                           [&](int) { return env; });
  check_correct(results, 3);
  CHECK_THAT(results[0].out, Catch::Contains("2 rails (127.0.0.1, 127.0.0.1)"));
  // An exclusion list names no rails: a clear error.
  const auto bad =
      run({kBench, "allreduce", "--rank", "0", "--world-size", "1"}, {{"NCCL_IB_HCA", "^mlx5_0"}});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("excludes devices"));
  const auto none =
      run({kBench, "allreduce", "--rank", "0", "--world-size", "1"},
          {{"RAILYARD_SYSFS_ROOT", (dir.path() / "root").string()}, {"NCCL_IB_HCA", "=mlx5_7:1"}});
  CHECK(none.exit_code != 0);
  CHECK_THAT(none.err, Catch::Contains("mlx5_7"));
}

TEST_CASE("the JSON says which path ran and the plot draws busbw per size and rail",
          "[bench][allreduce]") {
  TempDir dir;
  const std::string json_file = (dir.path() / "r.json").string();
  const std::string svg_file = (dir.path() / "r.svg").string();
  auto results =
      run_ranks(2, {"--rails", "127.0.0.1,lo", "-b", "1K", "-e", "1M", "-f", "32", "-n", "2", "-w",
                    "0", "--hugepages", "--streams", "3", "--json", json_file, "--plot", svg_file});
  check_correct(results, 3);
  CHECK_THAT(results[0].out, Catch::Contains("memory host (hugepages)"));
  CHECK_THAT(results[0].out, Catch::Contains("#   rail 1: tcp 127.0.0.1, 3 connections"));
  std::ifstream in(json_file);
  const auto j = nlohmann::json::parse(in);
  CHECK(j.at("transport") == "tcp");
  CHECK(j.at("memory") == "host (hugepages)");
  REQUIRE(j.at("rails").size() == 2);
  CHECK(j.at("rails")[1].at("path") == "tcp 127.0.0.1, 3 connections");
  CHECK(j.at("rows").size() == 3);
  std::ifstream svg_in(svg_file);
  const std::string svg((std::istreambuf_iterator<char>(svg_in)), std::istreambuf_iterator<char>());
  CHECK_THAT(svg, Catch::Contains("<svg"));
  CHECK_THAT(svg, Catch::Contains(">rail 0 127.0.0.1<"));
  CHECK_THAT(svg, Catch::Contains(">rail 1 127.0.0.1<"));
  CHECK_THAT(svg, Catch::Contains(">all rails<"));
}

TEST_CASE("verbs rails are planned from sysfs and a node without the device says so",
          "[bench][allreduce][verbs]") {
  // A RoCE device whose netdev is lo, with 127.0.0.1's IPv4-mapped GIDs: the plan works (the
  // rail's TCP side runs on loopback), opening the device cannot, on a machine without RDMA.
  TempDir dir;
  std::ofstream(dir.path() / "node.json")
      << R"({"host_bridges": [{"id": "0000:10", "numa": 0, "ports": [
           {"nic": {"rdma": "mlx5_0", "netdev": "lo", "link_layer": "Ethernet",
                    "ipv4": "127.0.0.1"}}]}]})";
  REQUIRE(run({RAILYARD_BIN_DIR "/railyard-fixture", (dir.path() / "node.json").string(),
               (dir.path() / "root").string()})
              .exit_code == 0);
  const std::map<std::string, std::string> env = {
      {"RAILYARD_SYSFS_ROOT", (dir.path() / "root").string()}};
  auto results = run_ranks(2, {"--transport", "verbs", "--rails", "mlx5_0:1", "-e", "1K"},
                           [&](int) { return env; });
  // The plan held (a planning error also names "RDMA device mlx5_0"): it failed at opening it.
  for (const auto& r : results) {
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("RDMA device mlx5_0: no RDMA devices here") ||
                          Catch::Contains("RDMA device mlx5_0 cannot be opened"));
  }
  // A rail that is no RDMA device, and a GID index the port does not have, fail before anyone
  // waits.
  auto not_rdma = run({kBench, "allreduce", "--rank", "0", "--world-size", "1", "--transport",
                       "verbs", "--rails", "127.0.0.1"},
                      env);
  CHECK(not_rdma.exit_code == 2);
  CHECK_THAT(not_rdma.err,
             Catch::Contains("'127.0.0.1' is not an RDMA device, nor the netdev of one, in "
                             "/sys/class/infiniband"));
  auto gid = run({kBench, "allreduce", "--rank", "0", "--world-size", "1", "--transport", "verbs",
                  "--rails", "mlx5_0", "--gid-index", "7"},
                 env);
  CHECK(gid.exit_code == 2);
  CHECK_THAT(gid.err, Catch::Contains("mlx5_0:1 has no GID at index 7"));
  auto slot = run({kBench, "allreduce", "--rank", "0", "--world-size", "1", "--transport", "verbs",
                   "--rails", "mlx5_0", "--slot-size", "2G"},
                  env);
  CHECK(slot.exit_code == 2);
  CHECK_THAT(slot.err, Catch::Contains("--slot-size 2G: 1 byte to 1G"));
}

TEST_CASE("reduce times the sum alone and checks every element of every type", "[bench][reduce]") {
  for (const char* d : {"float", "half", "bfloat16", "int32"}) {
    TempDir dir;
    const std::string json_file = (dir.path() / "r.json").string();
    auto r = run({kBench, "reduce", "-d", d, "-b", "6", "-e", "300000", "-f", "13", "-n", "2", "-w",
                  "1", "--json", json_file});
    INFO(d << "\n" << r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
    std::ifstream in(json_file);
    const auto j = nlohmann::json::parse(in);
    CHECK(j.at("type") == d);
    CHECK(j.at("rows").size() == 5);  // 6, 78, 1014, 13182, 171366 B (rounded to elements)
    for (const auto& row : j.at("rows")) CHECK(row.at("gbps").get<double>() > 0);
  }
  // An output that cannot be written is an error naming it, not a silent loss.
  auto bad = run({kBench, "reduce", "-e", "1K", "--json", "/nonexistent-dir/r.json"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--json /nonexistent-dir/r.json: cannot write"));
}

TEST_CASE("GPU paths without a GPU and NCCL without GPU memory are clear errors",
          "[bench][allreduce]") {
  auto cuda = run({kBench, "allreduce", "--rank", "0", "--world-size", "1", "--rails", "127.0.0.1",
                   "--memory", "cuda"});
  CHECK(cuda.exit_code == 2);
  CHECK_THAT(cuda.err, Catch::Contains("--memory cuda:"));
  auto nccl = run({kBench, "allreduce", "--rank", "0", "--world-size", "1", "--rails", "127.0.0.1",
                   "--transport", "nccl"});
  CHECK(nccl.exit_code == 2);
  CHECK_THAT(nccl.err, Catch::Contains("add --memory cuda"));
}

TEST_CASE("the rendezvous may be a host name, as MASTER_ADDR often is", "[bench][allreduce]") {
  auto results = run_ranks(
      2, {"--rails", "127.0.0.1", "-b", "1K", "-e", "1K", "-n", "1", "-w", "0", "-c", "1"},
      [](int r) {
        return std::map<std::string, std::string>{{"RANK", std::to_string(r)},
                                                  {"WORLD_SIZE", "2"},
                                                  {"MASTER_ADDR", "localhost"},
                                                  {"MASTER_PORT", "<rv-port>"}};
      },
      false);
  check_correct(results, 1);
  const auto bad = run({kBench, "allreduce", "--rank", "1", "--world-size", "2", "--rendezvous",
                        "no-such-host.invalid:29500", "--rails", "127.0.0.1", "--timeout", "1"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("cannot resolve no-such-host.invalid"));
}

TEST_CASE("p2p measures each rail both ways and checks every byte", "[bench][p2p]") {
  TempDir dir;
  const std::string json_file = (dir.path() / "p2p.json").string();
  const std::string rv = "127.0.0.1:" + std::to_string(free_port());
  std::vector<RunResult> res(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      std::vector<std::string> argv = {kBench,         "p2p",
                                       "--rank",       std::to_string(r),
                                       "--world-size", "2",
                                       "--rendezvous", rv,
                                       "--rails",      "127.0.0.1,lo",
                                       "-b",           "3",
                                       "-e",           "300000",
                                       "-f",           "37",
                                       "-n",           "3",
                                       "-w",           "1",
                                       "-c",           "1",
                                       "--timeout",    "20"};
      if (r == 0) argv.insert(argv.end(), {"--json", json_file});
      res[static_cast<size_t>(r)] = run(argv);
    });
  for (auto& t : threads) t.join();
  INFO(res[0].out << res[0].err << res[1].err);
  REQUIRE(res[0].exit_code == 0);
  REQUIRE(res[1].exit_code == 0);
  CHECK(res[1].out.empty());
  CHECK_THAT(res[0].out, Catch::Contains("# Wrong bytes : 0 OK"));
  std::ifstream in(json_file);
  const auto j = nlohmann::json::parse(in);
  REQUIRE(j.at("rows").size() == 2 * 4);  // 2 rails x (3, 111, 4107, 151959 B)
  for (const auto& row : j.at("rows")) {
    CHECK(row.at("wrong") == 0);
    CHECK(row.at("gbps_0to1").get<double>() > 0);
    CHECK(row.at("gbps_1to0").get<double>() > 0);
    CHECK(row.at("gbps_both").get<double>() > 0);
    CHECK(row.at("latency_us").get<double>() > 0);
  }
  CHECK(j.at("rows")[7].at("rail") == 1);
  CHECK(j.at("rows")[7].at("size") == 151959);
  const auto three = run({kBench, "p2p", "--rank", "0", "--world-size", "3", "--rendezvous", rv,
                          "--rails", "127.0.0.1"});
  CHECK(three.exit_code == 2);
  CHECK_THAT(three.err, Catch::Contains("exactly 2 ranks"));
}

TEST_CASE("rank, world and rendezvous from mpirun, Indexed Job and torchrun environments",
          "[bench][allreduce]") {
  const std::vector<std::string> small = {"--rails", "127.0.0.1", "-b", "64", "-e",
                                          "64",      "-n",        "1",  "-w", "0"};
  SECTION("mpirun") {
    auto args = small;
    args.insert(args.end(), {"--rendezvous", "127.0.0.1:" + std::to_string(free_port())});
    check_correct(run_ranks(
                      2, args,
                      [](int r) {
                        return std::map<std::string, std::string>{
                            {"OMPI_COMM_WORLD_RANK", std::to_string(r)},
                            {"OMPI_COMM_WORLD_SIZE", "2"}};
                      },
                      false),
                  1);
  }
  SECTION("Indexed Job") {
    auto args = small;
    args.insert(args.end(),
                {"--world-size", "2", "--rendezvous", "127.0.0.1:" + std::to_string(free_port())});
    check_correct(run_ranks(
                      2, args,
                      [](int r) {
                        return std::map<std::string, std::string>{
                            {"JOB_COMPLETION_INDEX", std::to_string(r)}};
                      },
                      false),
                  1);
  }
  SECTION("torchrun") {
    check_correct(run_ranks(
                      2, small,
                      [](int r) {
                        return std::map<std::string, std::string>{{"RANK", std::to_string(r)},
                                                                  {"WORLD_SIZE", "2"},
                                                                  {"MASTER_ADDR", "127.0.0.1"},
                                                                  {"MASTER_PORT", "<rv-port>"}};
                      },
                      false),
                  1);
  }
  auto getenv = [](std::map<std::string, std::string> m) {
    return [m](const std::string& k) -> std::optional<std::string> {
      auto it = m.find(k);
      if (it == m.end()) return std::nullopt;
      return it->second;
    };
  };
  using railyard::rdma::resolve_launch;
  CHECK_THROWS_WITH(resolve_launch({}, getenv({})), Catch::Contains("no rank"));
  CHECK_THROWS_WITH(resolve_launch({}, getenv({{"JOB_COMPLETION_INDEX", "1"}})),
                    Catch::Contains("no world size"));
  CHECK_THROWS_WITH(
      resolve_launch(
          {},
          getenv({{"RANK", "3"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}})),
      Catch::Contains("rank 3 is not below the world size 2"));
  CHECK(resolve_launch({5, 8, "h:1", ""}, getenv({{"RANK", "0"}})).rank == 5);  // flags win
}

TEST_CASE("a rank that never comes, and a rank killed mid-run, are named within the timeout",
          "[bench][allreduce]") {
  const std::string rv = "127.0.0.1:" + std::to_string(free_port());
  auto lonely = run({kBench, "allreduce", "--rank", "0", "--world-size", "2", "--rendezvous", rv,
                     "--rails", "127.0.0.1", "--timeout", "2"});
  CHECK(lonely.exit_code == 2);
  CHECK_THAT(lonely.err, Catch::Contains("timed out after 2 s waiting for rank 1 to join"));

  // Three ranks on a long run; rank 2 is killed once rank 0 has printed its first row.
  const std::string rv2 = "127.0.0.1:" + std::to_string(free_port());
  std::vector<pid_t> pids;
  int out0[2];
  REQUIRE(::pipe(out0) == 0);
  for (int r = 0; r < 3; ++r) {
    std::vector<std::string> argv = {kBench,         "allreduce", "--rank",       std::to_string(r),
                                     "--world-size", "3",         "--rendezvous", rv2,
                                     "--rails",      "127.0.0.1", "-b",           "4K",
                                     "-e",           "64M",       "-f",           "2",
                                     "-n",           "50",        "--timeout",    "5"};
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (r == 0) {
      posix_spawn_file_actions_adddup2(&fa, out0[1], 1);
      posix_spawn_file_actions_adddup2(&fa, out0[1], 2);
    } else {
      posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    posix_spawn_file_actions_addclose(&fa, out0[0]);
    pid_t pid;
    REQUIRE(posix_spawn(&pid, kBench.c_str(), &fa, nullptr, args.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    pids.push_back(pid);
  }
  ::close(out0[1]);
  FILE* in = ::fdopen(out0[0], "r");
  char line[512];
  bool started = false;
  // The first row: a size first (not the header, nor the warning that no token was given).
  unsigned long size = 0;
  while (!started && std::fgets(line, sizeof line, in))
    started = std::sscanf(line, " %lu", &size) == 1;
  REQUIRE(started);
  ::kill(pids[2], SIGKILL);
  std::string rest;
  while (std::fgets(line, sizeof line, in)) rest += line;
  std::fclose(in);
  // Rank 0 names rank 2: seen closing, or through rank 1, which saw it first, gave up and said
  // why before leaving (rank 0 once named rank 1 alone, without that note).
  CHECK_THAT(
      rest,
      Catch::Contains("railyard-bench: rank 2 (rail 0) closed the connection (did it die?)") ||
          Catch::Contains("railyard-bench: rank 1 (rail 0) gave up: lost rank 2 (rail 0)"));
  int status = 0;
  ::waitpid(pids[0], &status, 0);
  CHECK(WEXITSTATUS(status) == 2);
  ::waitpid(pids[1], &status, 0);
  CHECK(WEXITSTATUS(status) == 2);
  ::waitpid(pids[2], &status, 0);
}
