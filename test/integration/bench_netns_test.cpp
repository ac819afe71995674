// railyard-bench between network namespaces, as ranks in pods on different nodes see it: one
// namespace per rank, and per rail a bridge in a "leaf switch" namespace of its own with a veth
// to every rank (a rail-optimised fabric). The ring's connections are bound to each rank's rail
// address, so rail k's traffic can only cross switch k; the test checks the switches' counters.
#include <catch2/catch.hpp>
#include <memory>
#include <thread>

#include "nccl-tests-wrapper/nccl/parse.h"
#include "test/support/netns.h"
#include "test/support/run.h"

using namespace railyard::testing;

namespace {

const std::string kBench = RAILYARD_BIN_DIR "/railyard-bench";

struct Fabric {
  std::vector<std::unique_ptr<TestNetns>> ranks, switches;
  Fabric(int world, int rails) {
    for (int r = 0; r < world; ++r) ranks.push_back(std::make_unique<TestNetns>("rank"));
    for (int k = 0; k < rails; ++k) {
      switches.push_back(std::make_unique<TestNetns>("leaf"));
      const TestNetns& sw = *switches.back();
      sw.ip("link add br0 type bridge");
      sw.ip("link set br0 up");
      for (int r = 0; r < world; ++r) {
        const std::string port = "p" + std::to_string(r);
        veth(*ranks[static_cast<size_t>(r)], "rail" + std::to_string(k), sw, port);
        sw.ip("link set " + port + " master br0");
        ranks[static_cast<size_t>(r)]->ip("addr add " + address(k, r) + "/24 dev rail" +
                                          std::to_string(k));
      }
    }
  }
  static std::string address(int rail, int rank) {
    return "10.6" + std::to_string(rail) + ".0." + std::to_string(rank + 1);
  }
  std::string rails_of(int rank) const {
    std::string s;
    for (size_t k = 0; k < switches.size(); ++k)
      s += (k ? "," : "") + address(static_cast<int>(k), rank);
    return s;
  }
  // Bytes the rail's switch forwarded (what its bridge ports received).
  long long switch_bytes(size_t rail) const {
    long long total = 0;
    for (size_t r = 0; r < ranks.size(); ++r)
      total += std::stoll(sh("ip netns exec " + switches[rail]->name() + " cat /sys/class/net/p" +
                             std::to_string(r) + "/statistics/rx_bytes"));
    return total;
  }
};

std::vector<RunResult> run_fabric(const Fabric& f, const std::vector<std::string>& args) {
  const int world = static_cast<int>(f.ranks.size());
  const std::string rv = Fabric::address(0, 0) + ":29517";
  std::vector<RunResult> results(f.ranks.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      std::vector<std::string> argv = {"ip",           "netns",
                                       "exec",         f.ranks[static_cast<size_t>(r)]->name(),
                                       kBench,         "allreduce",
                                       "--rank",       std::to_string(r),
                                       "--world-size", std::to_string(world),
                                       "--rendezvous", rv,
                                       "--rails",      f.rails_of(r),
                                       "--timeout",    "30"};
      argv.insert(argv.end(), args.begin(), args.end());
      results[static_cast<size_t>(r)] = run(argv);
    });
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace

TEST_CASE("allreduce over veth rails between namespaces is exact for 2, 3 and 4 ranks",
          "[bench][netns]") {
  for (int world : {2, 3, 4}) {
    Fabric fabric(world, 2);
    for (const char* d : {"float", "half", "bfloat16", "int32"}) {
      INFO(world << " ranks, " << d);
      // Odd element counts (3, 63, 1323, 27783, 583443): divisible neither by ranks nor rails.
      const auto before0 = fabric.switch_bytes(0), before1 = fabric.switch_bytes(1);
      const auto res = run_fabric(fabric, {"-d", d, "-b", "12", "-e", "2400000", "-f", "21", "-n",
                                           "2", "-w", "1", "-c", "1"});
      for (const auto& r : res) {
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
      }
      const auto parsed = railyard::validate::parse_nccl_tests(res[0].out);
      CHECK(parsed.out_of_bounds == 0);
      REQUIRE(parsed.rows.size() == 5);
      for (const auto& row : parsed.rows) {
        CHECK(row.out_of_place->wrong == 0.0);
        CHECK(row.in_place->wrong == 0.0);
      }
      // Both rails carried their half: each switch forwarded at least the ring's share of the
      // largest size, 2(n-1)/n of its slice per rank, per iteration.
      const long long slice = 2400000 / 2;
      const long long share = slice * 2 * (world - 1) / world * world;
      CHECK(fabric.switch_bytes(0) - before0 > share);
      CHECK(fabric.switch_bytes(1) - before1 > share);
    }
  }
}
