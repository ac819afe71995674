// railyard-validate fleet's moving parts over loopback: the control messages, a pair test, a
// whole 3-rank fleet in threads, and the bits of the ARP probe that need no second node (the
// probe itself runs on the simulated fleet, test/fleet/fleet_sim_test.sh).
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "nccl-tests-wrapper/fleet/classify.h"
#include "nccl-tests-wrapper/fleet/control.h"
#include "nccl-tests-wrapper/fleet/messages.h"
#include "nccl-tests-wrapper/fleet/pair.h"
#include "nccl-tests-wrapper/fleet/probe.h"
#include "nccl-tests-wrapper/fleet/run.h"
#include "rdma/transport/channel_auth.h"
#include "rdma/transport/frame.h"
#include "rdma/transport/socket.h"
#include "test/support/temp_dir.h"

using namespace railyard;
using namespace railyard::validate;
using namespace std::chrono_literals;

namespace {

struct Connected {
  rdma::Socket a, b;
};
Connected connected() {
  rdma::Socket server = rdma::Socket::listen_on("127.0.0.1", 0);
  Connected c;
  c.a = rdma::Socket::connect_to({"127.0.0.1", server.local_port()}, "", 5s);
  c.b = server.accept_one(5s, "the test's client");
  return c;
}

rdma::bench::Options small(const std::string& rails) {
  rdma::bench::Options o;
  o.rails = rails;
  o.max_bytes = "64K";
  o.iters = 3;
  o.warmup = 1;
  o.timeout_s = 5;
  o.streams = 1;
  return o;
}

}  // namespace

TEST_CASE("fleet control: a message arrives whole, garbage and a closed peer are named",
          "[validate][fleet]") {
  auto c = connected();
  send_message(c.a,
               {{"op", "pair"},
                {"peer", nlohmann::json::array({nlohmann::json::array({"10.0.0.2", 4000})})}},
               "b");
  const auto m = recv_message(c.b, "a", 5s);
  CHECK(m["op"] == "pair");
  CHECK(m["peer"][0][1] == 4000);

  const std::string junk = "not json";
  const uint32_t n = static_cast<uint32_t>(junk.size());
  c.a.send_all(&n, sizeof n, "b");
  c.a.send_all(junk.data(), n, "b");
  CHECK_THROWS_WITH(recv_message(c.b, "rank 3 (node-3)", 5s),
                    Catch::Contains("rank 3 (node-3)") && Catch::Contains("not JSON"));
  c.a = rdma::Socket();
  CHECK_THROWS_WITH(recv_message(c.b, "rank 3 (node-3)", 5s), Catch::Contains("rank 3 (node-3)"));
}

TEST_CASE("fleet: each pair is judged against its own run's median", "[validate][fleet]") {
  const auto r =
      relative_to_run({{0, 1, 0, 10.0}, {2, 3, 0, 5.0}, {0, 1, 1, 20.0}, {2, 3, 1, std::nullopt}});
  REQUIRE(r.size() == 4);
  CHECK(*r[0] == Approx(1.0));
  CHECK(*r[1] == Approx(0.5));
  CHECK(*r[2] == Approx(2.0));
  CHECK_FALSE(r[3]);
}

TEST_CASE("fleet: a pair test measures every rail, only role 0 reports", "[validate][fleet]") {
  const auto o = small("127.0.0.1,127.0.0.1");
  const topology::Sysfs sysfs("/");
  const FleetRails rails = resolve_fleet_rails(o, sysfs);
  REQUIRE(rails.addresses.size() == 2);
  std::vector<rdma::Socket> l0, l1;
  std::vector<rdma::Endpoint> e0, e1;
  for (int k = 0; k < 2; ++k) {
    l0.push_back(rdma::Socket::listen_on("127.0.0.1", 0));
    e0.push_back({"127.0.0.1", l0.back().local_port()});
    l1.push_back(rdma::Socket::listen_on("127.0.0.1", 0));
    e1.push_back({"127.0.0.1", l1.back().local_port()});
  }
  std::vector<RailOutcome> one;
  std::thread peer([&] { one = test_pair(o, rails, sysfs, 1, std::move(l1), e0, "rank 0 (a)"); });
  const auto zero = test_pair(o, rails, sysfs, 0, std::move(l0), e1, "rank 1 (b)");
  peer.join();
  for (size_t k = 0; k < 2; ++k) {
    INFO("rail " << k << ": " << zero[k].error);
    CHECK(zero[k].busbw.value_or(0) > 0);
    CHECK(zero[k].error.empty());
    CHECK_FALSE(one[k].busbw);
    CHECK(one[k].error.empty());
  }
}

TEST_CASE("fleet: a silent peer costs one timeout and is named as the fleet knows it, per rail",
          "[validate][fleet]") {
  auto o = small("127.0.0.1");
  o.timeout_s = 1;
  const topology::Sysfs sysfs("/");
  const FleetRails rails = resolve_fleet_rails(o, sysfs);
  std::vector<rdma::Socket> l;
  l.push_back(rdma::Socket::listen_on("127.0.0.1", 0));
  // A listener nobody serves: the connection is accepted by the kernel, then nothing answers.
  rdma::Socket deaf = rdma::Socket::listen_on("127.0.0.1", 0);
  const auto out = test_pair(o, rails, sysfs, 0, std::move(l), {{"127.0.0.1", deaf.local_port()}},
                             "rank 7 (node-7)");
  REQUIRE(out.size() == 1);
  CHECK_FALSE(out[0].busbw);
  // Not "rank 1 (rail 0)": the pair is a two-rank ring of its own, the partner is the fleet's.
  CHECK_THAT(out[0].error, Catch::Contains("rank 7 (node-7) on rail 0"));
}

TEST_CASE("fleet: three ranks over loopback, every pair on every rail, healthy",
          "[validate][fleet]") {
  rdma::Socket probe = rdma::Socket::listen_on("127.0.0.1", 0);
  const int port = probe.local_port();
  probe = rdma::Socket();
  std::vector<FleetSettings> settings(3);
  for (int r = 0; r < 3; ++r) {
    settings[r].bench = small("127.0.0.1,127.0.0.1");
    settings[r].bench.rank = r;
    settings[r].bench.world = 3;
    settings[r].bench.rendezvous = "127.0.0.1:" + std::to_string(port);
    settings[r].node_name = "node-" + std::to_string(r);
    settings[r].probe = false;
  }
  std::vector<std::thread> others;
  for (int r = 1; r < 3; ++r)
    others.emplace_back([&, r] {
      std::ostringstream quiet;
      run_fleet(settings[r], quiet);
    });
  std::ostringstream progress;
  const auto report = run_fleet(settings[0], progress);
  for (auto& t : others) t.join();
  REQUIRE(report);
  CHECK(report->nodes == std::vector<std::string>{"node-0", "node-1", "node-2"});
  CHECK(report->results.size() == 3 * 2);  // 3 pairs x 2 rails, in 3 rounds (one sits out)
  for (const auto& p : report->results) CHECK(p.busbw.value_or(0) > 0);
  CHECK_THAT(progress.str(), Catch::Contains("round 3/3"));
}

TEST_CASE("fleet probe: a rail address names its netdev and MAC, and a bad netdev is named",
          "[validate][fleet]") {
  const auto lo = rdma::netdev_holding("127.0.0.1");
  CHECK(lo.name == "lo");
  CHECK(lo.up);
  CHECK(lo.carrier);
  CHECK(mac_address("lo") == "00:00:00:00:00:00");
  CHECK_THROWS_WITH(rdma::netdev_holding("198.51.100.254"), Catch::Contains("198.51.100.254"));
  CHECK_THROWS_WITH(mac_address("nosuchnetdev0"), Catch::Contains("nosuchnetdev0"));
  CHECK_THROWS_WITH(arp_probe("nosuchnetdev0", "127.0.0.1", {"127.0.0.2"}, 10ms),
                    Catch::Contains("nosuchnetdev0"));
}

TEST_CASE("fleet: bad settings are named before any rank waits", "[validate][fleet]") {
  FleetSettings s;
  s.bench = small("127.0.0.1");
  s.bench.rank = 0;
  s.bench.world = 1;
  s.bench.rendezvous = "127.0.0.1:1";
  std::ostringstream progress;
  // Rank 0 names them in its report (exit 2 still writes one); any other rank throws.
  const auto not_run = [&] { return run_fleet(s, progress).value().could_not_run; };
  CHECK_THAT(not_run(), Catch::Contains("at least 2 ranks"));
  s.bench.world = 2;
  s.bench.max_bytes = "lots";
  CHECK_THAT(not_run(), Catch::Contains("'lots' is not a size"));
  s.bench.max_bytes = "0";
  CHECK_THAT(not_run(), Catch::Contains("--size 0"));
  s.bench.rank = 1;
  CHECK_THROWS_WITH(run_fleet(s, progress), Catch::Contains("--size 0"));
  s.bench.rank = 0;
  s.bench.max_bytes = "64K";
  s.mode = "guess";
  CHECK_THAT(not_run(), Catch::Contains("--mode"));
  s.mode = "pairwise";
  s.bench.rails = "";
  ::unsetenv("NCCL_IB_HCA");
  CHECK_FALSE(not_run().empty());
  s.bench.rank = 1;
  CHECK_THROWS_AS(run_fleet(s, progress), std::invalid_argument);
}

TEST_CASE("fleet: a rank that never joins is named in rank 0's report, with who joined",
          "[validate][fleet]") {
  rdma::Socket probe = rdma::Socket::listen_on("127.0.0.1", 0);
  const int port = probe.local_port();
  probe = rdma::Socket();
  std::vector<FleetSettings> settings(2);
  for (int r = 0; r < 2; ++r) {
    settings[r].bench = small("127.0.0.1");
    settings[r].bench.rank = r;
    settings[r].bench.world = 3;  // rank 2 never comes
    settings[r].bench.timeout_s = 1;
    settings[r].bench.rendezvous = "127.0.0.1:" + std::to_string(port);
    settings[r].node_name = "node-" + std::to_string(r);
  }
  std::thread one([&] {
    std::ostringstream quiet;
    run_fleet(settings[1], quiet);  // let go by rank 0 when it gives up
  });
  std::ostringstream progress;
  const auto report = run_fleet(settings[0], progress);
  one.join();
  REQUIRE(report);
  CHECK_THAT(report->could_not_run, Catch::Contains("rank 2 to join"));
  CHECK(report->missing == std::vector<int>{2});
  CHECK(report->nodes == std::vector<std::string>{"node-0", "node-1", ""});
  CHECK(fleet_json(*report)["verdict"] == "could not run");
}

TEST_CASE("fleet: strangers at the rendezvous are dropped and the fleet finishes healthy",
          "[validate][fleet]") {
  railyard::testing::TempDir dir;
  const std::string token = (dir.path() / "token").string();
  std::ofstream(token) << "a-secret-of-32-bytes-for-this-run\n";
  std::ofstream(dir.path() / "wrong") << "another-secret-not-the-one-in-use\n";
  const auto key = rdma::ChannelKey::from_file(token);
  const auto wrong = rdma::ChannelKey::from_file((dir.path() / "wrong").string());
  rdma::Socket probe = rdma::Socket::listen_on("127.0.0.1", 0);
  const int port = probe.local_port();
  probe = rdma::Socket();
  std::vector<FleetSettings> settings(3);
  for (int r = 0; r < 3; ++r) {
    settings[r].bench = small("127.0.0.1,127.0.0.1");
    settings[r].bench.rank = r;
    settings[r].bench.world = 3;
    settings[r].bench.timeout_s = 20;
    settings[r].bench.rendezvous = "127.0.0.1:" + std::to_string(port);
    settings[r].bench.token_file = token;
    settings[r].node_name = "node-" + std::to_string(r);
    settings[r].probe = false;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::ostringstream progress;
  std::optional<FleetReport> report;
  std::thread zero([&] { report = run_fleet(settings[0], progress); });
  auto stranger = [&] { return rdma::Socket::connect_to({"127.0.0.1", port}, "", 10s, "rank 0"); };
  auto hello = [&](const rdma::ChannelKey& k, const std::string& text) {
    rdma::Socket s = stranger();
    try {
      rdma::prove_as_connector(s, k, "fleet", "rank 0", std::chrono::steady_clock::now() + 10s);
      rdma::send_frame(s, text, "rank 0");
      char b;
      return ::recv(s.fd(), &b, 1, 0) == 0 ? std::string("closed") : std::string("answered");
    } catch (const rdma::NetError& e) {
      return std::string(e.what());
    }
  };
  const std::string good_rails = R"("rails": ["127.0.0.1", "127.0.0.1"])";
  // Before any rank: junk, a silent socket, a forged join for rank 1, deeply nested JSON, a
  // node name no kubectl command could take, and a rank out of range.
  rdma::Socket junk = stranger();
  const std::string garbage(300, 'j');
  junk.send_all(garbage.data(), garbage.size(), "rank 0");
  rdma::Socket silent = stranger();
  const std::string forged =
      hello(wrong, R"({"rank": 1, "world": 3, "node": "evil", )" + good_rails + "}");
  const std::string nested = hello(key, std::string(5000, '[') + std::string(5000, ']'));
  const std::string bad_name = hello(
      key, R"({"rank": 2, "world": 3, "node": "x;kubectl delete node --all", )" + good_rails + "}");
  const std::string out_of_range =
      hello(key, R"({"rank": 7, "world": 3, "node": "node-7", )" + good_rails + "}");
  std::vector<std::thread> others;
  for (int r = 1; r < 3; ++r)
    others.emplace_back([&, r] {
      std::ostringstream quiet;
      run_fleet(settings[r], quiet);
    });
  for (auto& t : others) t.join();
  zero.join();
  REQUIRE(report);
  INFO(progress.str());
  CHECK(report->could_not_run.empty());
  CHECK(report->nodes == std::vector<std::string>{"node-0", "node-1", "node-2"});
  // Every pair measured on every rail (whether a pair is judged slow on a busy 2-core machine is
  // not this test's business).
  CHECK(report->results.size() == 3 * 2);
  for (const auto& r : report->results) CHECK(r.busbw.value_or(0) > 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 15s);  // the silent one held up nobody
  CHECK_THAT(forged, Catch::Contains("at the token check"));
  CHECK(nested == "closed");
  CHECK(bad_name == "closed");
  CHECK(out_of_range == "closed");
  const std::string p = progress.str();
  CHECK_THAT(p, Catch::Contains("did not prove the shared token"));
  CHECK_THAT(p, Catch::Contains("nested deeper than 16"));
  CHECK_THAT(p, Catch::Contains(
                    "a node name that is not an RFC 1123 name: 'x;kubectl delete node --all'"));
  CHECK_THAT(p, Catch::Contains("a rank that is not an integer from 0 to 2"));
}

TEST_CASE("fleet messages: every field checked", "[validate][fleet]") {
  using nlohmann::json;
  const std::string from = "rank 0";
  const json hello = {{"rank", 1},
                      {"world", 3},
                      {"node", "gpu-a.rack1"},
                      {"rails", json::array({"10.0.0.1", "10.1.0.1"})},
                      {"macs", json::array({"02:00:00:00:00:01", "02:00:00:00:00:02"})}};
  const Hello h = parse_hello(hello, 3, 2, from);
  CHECK(h.rank == 1);
  CHECK(h.node == "gpu-a.rack1");
  CHECK(h.macs.size() == 2);
  auto bad_hello = [&](const char* key, const json& v, const std::string& says) {
    json m = hello;
    m[key] = v;
    CHECK_THROWS_WITH(parse_hello(m, 3, 2, from), Catch::Contains(says));
  };
  bad_hello("rank", 3, "a rank that is not an integer from 0 to 2");
  bad_hello("rank", "1", "a rank that is not an integer");
  bad_hello("world", 4, "a world size of 4, not 3");
  bad_hello("node", "Node_A", "not an RFC 1123 name");
  bad_hello("node", std::string(300, 'a'), "a node name that is not a string of at most 253");
  bad_hello("rails", json::array({"10.0.0.1"}), "does not hold 2 (one per rail)");
  bad_hello("rails", json::array({"10.0.0.1", "host"}), "not an IPv4 address: 'host'");
  bad_hello("macs", json::array({"02:00:00:00:00:01", "zz"}), "a MAC that is not one");
  json with_fw = hello;
  with_fw["firmware"] = json::array({"28.39.1002 (board MT_0000000838)", ""});
  CHECK(parse_hello(with_fw, 3, 2, from).firmware ==
        std::vector<std::string>{"28.39.1002 (board MT_0000000838)", ""});
  bad_hello("firmware", "28.39.1002", "firmware that is not a list of at most 64");
  bad_hello("firmware", json::array({std::string(200, '1')}),
            "a firmware version that is not a string of at most 160");
  bad_hello("firmware", json(std::vector<std::string>(65, "1.0")), "a list of at most 64");

  const json pair = {
      {"op", "pair"},
      {"role", 1},
      {"peer", json::array({json::array({"10.0.0.2", 4000}), json::array({"10.1.0.2", 4001})})},
      {"name", "rank 2 (b)"}};
  CHECK(parse_pair(pair, 2, from).peer[1].port == 4001);
  json p = pair;
  p["peer"] = json::array({json::array({"10.0.0.2", 4000})});  // fewer endpoints than rails
  CHECK_THROWS_WITH(parse_pair(p, 2, from), Catch::Contains("does not hold 2"));
  p = pair;
  p["role"] = 2;
  CHECK_THROWS_WITH(parse_pair(p, 2, from),
                    Catch::Contains("a role that is not an integer from 0 to 1"));
  p = pair;
  p["peer"][0][1] = 70000;
  CHECK_THROWS_WITH(parse_pair(p, 2, from),
                    Catch::Contains("a port that is not an integer from 1 to 65535"));

  const json ring = {{"op", "ring"},
                     {"index", 1},
                     {"table", json::array({json::array({json::array({"10.0.0.1", 4000})}),
                                            json::array({json::array({"10.0.0.2", 4000})})})},
                     {"names", {"a", "b"}}};
  CHECK(parse_ring(ring, 1, from).table.size() == 2);
  json r = ring;
  r["index"] = 2;
  CHECK_THROWS_WITH(parse_ring(r, 1, from),
                    Catch::Contains("a ring index that is not an integer from 0 to 1"));
  r = ring;
  r["table"] = json::array({json::array({json::array({"10.0.0.1", 4000})})});
  CHECK_THROWS_WITH(parse_ring(r, 1, from), Catch::Contains("2 or more members"));

  const json probe = {
      {"op", "probe"}, {"rail", 1}, {"targets", json::array({"10.1.0.2"})}, {"wait_ms", 200}};
  CHECK(parse_probe(probe, 2, from).rail == 1);
  json q = probe;
  q["rail"] = 2;
  CHECK_THROWS_WITH(parse_probe(q, 2, from),
                    Catch::Contains("a rail that is not an integer from 0 to 1"));

  CHECK(parse_ports({{"ports", json::array({4000, 4001})}}, 2, from) ==
        std::vector<int>{4000, 4001});
  CHECK_THROWS_WITH(parse_ports({{"ports", json::array({4000})}}, 2, from),
                    Catch::Contains("does not hold 2"));
  CHECK_THROWS_WITH(parse_ports(json::array(), 2, from), Catch::Contains("without 'ports'"));
}
