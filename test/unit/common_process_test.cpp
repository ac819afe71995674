// run_process as the CNI plugin's IPAM delegation and the validator use it: a child that does
// not read its stdin, one that outlives its limit.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "common/process.h"

using namespace std::chrono_literals;

TEST_CASE("a child that exits without reading its stdin is no SIGPIPE for us", "[common]") {
  // 4 MiB cannot fit the pipe: the write meets a closed reader. Before, SIGPIPE killed the
  // caller here (railyard-cni's DEL exited 141 when an IPAM plugin answered without reading).
  const std::string input(4 << 20, 'x');
  for (int i = 0; i < 20; ++i) {
    const auto r = railyard::run_process({"true"}, {}, input);
    REQUIRE(r.exit_code == 0);
  }
}

TEST_CASE("a child past its limit is killed and said to be", "[common]") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = railyard::run_process({"sleep", "30"}, {}, "", railyard::Stderr::kCapture, 200ms);
  CHECK(r.timed_out);
  CHECK(r.exit_code == 128 + 9);
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
}
