// The bench's rendezvous and rail connections against strangers on loopback: junk, a silent
// socket and a forged join reach rank 0 first and are dropped while the real ranks meet; a rank
// with the wrong token is refused on join and on a rail, and says which check failed.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "rdma/run/bootstrap.h"
#include "rdma/transport/channel_auth.h"
#include "rdma/transport/frame.h"
#include "test/support/temp_dir.h"

using namespace railyard::rdma;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

ChannelKey key_with(const railyard::testing::TempDir& dir, const std::string& name,
                    const std::string& secret) {
  const fs::path p = dir.path() / name;
  std::ofstream(p) << secret << "\n";
  return ChannelKey::from_file(p.string());
}

// A free port on loopback for the rendezvous.
int free_port() {
  const Socket probe = Socket::listen_on("127.0.0.1", 0);
  return probe.local_port();
}

// Connects to rank 0's rendezvous, retrying until it listens.
Socket stranger(int port) {
  return Socket::connect_to({"127.0.0.1", port}, "", 10s, "rank 0");
}

}  // namespace

TEST_CASE("rendezvous: strangers first are dropped, the ranks still meet", "[rdma][auth]") {
  railyard::testing::TempDir dir;
  const ChannelKey key = key_with(dir, "token", "a-secret-of-32-bytes-for-this-run");
  const ChannelKey wrong = key_with(dir, "other", "another-secret-not-the-one-in-use");
  const int port = free_port();
  const Endpoint rv{"127.0.0.1", port};
  auto eps = [](int r) {
    return std::vector<Endpoint>{{"127.0.0.1", 40000 + r}, {"127.0.0.1", 41000 + r}};
  };
  const auto t0 = std::chrono::steady_clock::now();
  auto zero = std::async(std::launch::async,
                         [&] { return exchange_endpoints(0, 3, rv, eps(0), 20s, key); });
  // Before any rank: junk, a silent socket, a forged join for rank 1 with the wrong token, and
  // a malformed join behind the right one.
  Socket junk = stranger(port);
  const std::string garbage(200, '\xff');
  junk.send_all(garbage.data(), garbage.size(), "rank 0");
  Socket silent = stranger(port);
  // The forged and the malformed joins finish before any rank starts: once the ranks have met,
  // rank 0 closes its door, and a stranger still in the middle would see that close instead.
  CHECK_THROWS_WITH(
      [&] {
        Socket s = stranger(port);
        prove_as_connector(s, wrong, "rendezvous", "rank 0",
                           std::chrono::steady_clock::now() + 10s);
      }(),
      Catch::Contains("at the token check"));
  {
    Socket s = stranger(port);
    prove_as_connector(s, key, "rendezvous", "rank 0", std::chrono::steady_clock::now() + 10s);
    send_frame(s, "2 3 not-an-endpoint", "rank 0");
    pollfd p{s.fd(), POLLIN, 0};
    REQUIRE(::poll(&p, 1, 10000) == 1);
    char b;
    CHECK(::recv(s.fd(), &b, 1, 0) == 0);  // rank 0 read it, refused it and closed
  }
  auto one = std::async(std::launch::async,
                        [&] { return exchange_endpoints(1, 3, rv, eps(1), 20s, key); });
  auto two = std::async(std::launch::async,
                        [&] { return exchange_endpoints(2, 3, rv, eps(2), 20s, key); });
  for (const Table& t : {zero.get(), one.get(), two.get()}) {
    REQUIRE(t.size() == 3);
    for (int r = 0; r < 3; ++r) {
      REQUIRE(t[static_cast<size_t>(r)].size() == 2);
      CHECK(t[static_cast<size_t>(r)][0].port == 40000 + r);
      CHECK(t[static_cast<size_t>(r)][1].port == 41000 + r);
    }
  }
  // The silent stranger held up nobody: well under its 10 s limit.
  CHECK(std::chrono::steady_clock::now() - t0 < 8s);
}

TEST_CASE("rendezvous and rails: a wrong token is refused on join and on a rail", "[rdma][auth]") {
  railyard::testing::TempDir dir;
  const ChannelKey key = key_with(dir, "token", "a-secret-of-32-bytes-for-this-run");
  const ChannelKey wrong = key_with(dir, "other", "another-secret-not-the-one-in-use");
  const std::vector<Endpoint> mine{{"127.0.0.1", 40000}};

  SECTION("on join") {
    const int port = free_port();
    auto zero = std::async(std::launch::async, [&] {
      return exchange_endpoints(0, 2, {"127.0.0.1", port}, mine, 2s, key);
    });
    CHECK_THROWS_WITH(exchange_endpoints(1, 2, {"127.0.0.1", port}, mine, 2s, wrong),
                      Catch::Contains("at the token check"));
    CHECK_THROWS_WITH(zero.get(),
                      Catch::Contains("timed out after 2 s waiting for rank 1 to join"));
  }
  SECTION("on a rail") {
    std::vector<Socket> l0, l1;
    l0.push_back(Socket::listen_on("127.0.0.1", 0));
    l1.push_back(Socket::listen_on("127.0.0.1", 0));
    const Table table{{{"127.0.0.1", l0[0].local_port()}}, {{"127.0.0.1", l1[0].local_port()}}};
    auto other = std::async(std::launch::async, [&] {
      return connect_ring(1, 2, {"127.0.0.1"}, l1, table, 2s, wrong);
    });
    CHECK_THROWS_WITH(connect_ring(0, 2, {"127.0.0.1"}, l0, table, 2s, key),
                      Catch::Contains("token"));
    CHECK_THROWS_WITH(other.get(), Catch::Contains("token"));
  }
  SECTION("and with the same token the rail connects, both ways proved") {
    std::vector<Socket> l0, l1;
    l0.push_back(Socket::listen_on("127.0.0.1", 0));
    l1.push_back(Socket::listen_on("127.0.0.1", 0));
    const Table table{{{"127.0.0.1", l0[0].local_port()}}, {{"127.0.0.1", l1[0].local_port()}}};
    auto other = std::async(std::launch::async, [&] {
      return connect_ring(1, 2, {"127.0.0.1"}, l1, table, 5s, key, 2);
    });
    const RingSockets r = connect_ring(0, 2, {"127.0.0.1"}, l0, table, 5s, key, 2);
    const RingSockets o = other.get();
    CHECK(r.next[0].size() == 2);
    CHECK(o.prev[0].size() == 2);
    // The data path works after the proof: a byte each way on the first pair.
    const char x = 42;
    char got = 0;
    r.next[0][0].send_all(&x, 1, "rank 1");
    o.prev[0][0].recv_all(&got, 1, "rank 0", 2s);
    CHECK(got == 42);
  }
}

TEST_CASE("control frames: a trickle cannot stretch a message, caps and nesting are enforced",
          "[rdma][auth]") {
  Socket server = Socket::listen_on("127.0.0.1", 0);
  Socket a = Socket::connect_to({"127.0.0.1", server.local_port()}, "", 5s);
  Socket b = server.accept_one(5s, "the client");
  // A length, then one byte every 100 ms: the whole frame has 500 ms.
  const uint32_t n = 100;
  a.send_all(&n, sizeof n, "b");
  std::thread trickle([&] {
    for (int i = 0; i < 20; ++i) {
      if (::send(a.fd(), "x", 1, MSG_NOSIGNAL) != 1) break;
      std::this_thread::sleep_for(100ms);  // the trickle's pace, not a synchronisation
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(recv_frame(b, "the trickler", 500ms, 1024),
                    Catch::Contains("timed out") && Catch::Contains("the trickler"));
  CHECK(std::chrono::steady_clock::now() - t0 < 1500ms);
  trickle.join();

  Socket c = Socket::connect_to({"127.0.0.1", server.local_port()}, "", 5s);
  Socket d = server.accept_one(5s, "the client");
  const uint32_t big = 16u << 20;
  c.send_all(&big, sizeof big, "d");
  CHECK_THROWS_WITH(recv_frame(d, "the big one", 1s, 64 * 1024),
                    Catch::Contains("16777216 bytes (at most 65536 here)"));
  CHECK_THROWS_WITH(parse_control_json(std::string(100, '[') + std::string(100, ']'), "deep"),
                    Catch::Contains("nested deeper than 16"));
  CHECK(parse_control_json(R"({"a": "[[[[[[[[[[[[[[[[[[[["})", "string").at("a").is_string());
}
