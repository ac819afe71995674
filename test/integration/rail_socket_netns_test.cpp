// Rail sockets between namespaces (rdma/transport/socket.h): bound to their NIC, they fail on that
// rail, naming it: at once when the NIC is administratively down, at the timeout when its link has
// no carrier (which may be a link still coming up: a pod's rail a moment after CNI ADD).
#include <catch2/catch.hpp>
#include <chrono>

#include "net/netns.h"
#include "rdma/transport/socket.h"
#include "test/support/netns.h"

using namespace railyard;
using namespace railyard::testing;
using namespace std::chrono_literals;

namespace {

// Connects from a's rail0 (10.66.0.1) to b's address; how long it took and the error.
std::pair<std::chrono::milliseconds, std::string> failed_connect(
    const TestNetns& a, std::chrono::milliseconds timeout) {
  return net::in_netns(a.path(), [&] {
    const auto start = std::chrono::steady_clock::now();
    std::string error;
    try {
      rdma::Socket::connect_to({"10.66.0.2", 9}, "10.66.0.1", timeout, "rank 1 (rail 0)");
    } catch (const rdma::NetError& e) {
      error = e.what();
    }
    return std::make_pair(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start),
                          error);
  });
}

}  // namespace

TEST_CASE("rail socket: a NIC administratively down is named at once", "[rdma][netns]") {
  TestNetns a("rail-a"), b("rail-b");
  veth(a, "rail0", b, "rail0");
  a.ip("addr add 10.66.0.1/24 dev rail0");
  b.ip("addr add 10.66.0.2/24 dev rail0");
  a.ip("link set rail0 down");
  const auto [took, error] = failed_connect(a, 3000ms);
  CHECK_THAT(error, Catch::Contains("rank 1 (rail 0)") && Catch::Contains("rail0 is down"));
  CHECK(took < 1000ms);
}

TEST_CASE("rail socket: a NIC without carrier is tried until the timeout, then named",
          "[rdma][netns]") {
  TestNetns a("rail-a"), b("rail-b");
  veth(a, "rail0", b, "rail0");
  a.ip("addr add 10.66.0.1/24 dev rail0");
  b.ip("addr add 10.66.0.2/24 dev rail0");
  b.ip("link set rail0 down");  // a's end stays up, without a carrier
  const auto [took, error] = failed_connect(a, 1500ms);
  CHECK_THAT(error, Catch::Contains("rank 1 (rail 0)") && Catch::Contains("rail0 has no link"));
  CHECK(took >= 1500ms);
  CHECK(took < 3000ms);
}
