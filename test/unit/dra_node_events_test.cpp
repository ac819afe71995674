// The DRA driver's Events on its Node, against an API server stand-in: one Warning when a fault
// appears naming its devices, nothing while it stays, a Normal when it goes, and an API server
// that refuses is logged, not fatal.
#include <catch2/catch.hpp>
#include <mutex>

#include "dra/publisher/node_events.h"
#include "test/support/http_stub.h"

using namespace railyard::dra;
using nlohmann::json;
using railyard::test::HttpStub;

namespace {

struct Recorder {
  std::mutex mu;
  std::vector<std::pair<std::string, json>> posts;  // target, body
  int status = 201;
  HttpStub http{[this](const HttpStub::Request& r) {
    std::lock_guard lock(mu);
    posts.emplace_back(r.method + " " + r.target, json::parse(r.body, nullptr, false));
    return HttpStub::Answer{status, {{"kind", "Event"}}, ""};
  }};
};

Device vf(const std::string& name, bool healthy) {
  Device d;
  d.name = name;
  d.type = DeviceType::kVf;
  d.healthy = healthy;
  if (!healthy) {
    d.reason = "port mlx5_5/1 is not ACTIVE";
    d.fault = railyard::deviceplugin::Fault::kPortDown;
  }
  return d;
}

}  // namespace

TEST_CASE("node events: a fault appears, stays, and goes", "[dra]") {
  Recorder rec;
  railyard::kube::ApiClient api({.server = rec.http.url()});
  NodeEvents events(api, "n1", "tainted railyard.io/rail-down, effect NoSchedule");
  events.update({vf("vf-a", true), vf("vf-b", true)}, "uid-1", "2026-12-07T18:00:00Z");
  CHECK(rec.posts.empty());

  events.update({vf("vf-a", false), vf("vf-b", false), vf("vf-c", true)}, "uid-1", "t1");
  REQUIRE(rec.posts.size() == 1);
  CHECK(rec.posts[0].first == "POST /api/v1/namespaces/default/events");
  const json& e = rec.posts[0].second;
  CHECK(e["involvedObject"] ==
        json({{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}, {"uid", "uid-1"}}));
  CHECK(e["type"] == "Warning");
  CHECK(e["reason"] == "RailDown");
  CHECK(e["message"] ==
        "2 devices of railyard.io tainted railyard.io/rail-down, effect NoSchedule (port-down): "
        "vf-a, vf-b: port mlx5_5/1 is not ACTIVE");

  events.update({vf("vf-a", false), vf("vf-b", false)}, "uid-1", "t2");  // unchanged: no Event
  CHECK(rec.posts.size() == 1);

  rec.status = 403;  // refused: logged, and the driver goes on
  events.update({vf("vf-a", true), vf("vf-b", true)}, "uid-1", "t3");
  REQUIRE(rec.posts.size() == 2);
  CHECK(rec.posts[1].second["type"] == "Normal");
  CHECK(rec.posts[1].second["reason"] == "RailUp");
  CHECK(rec.posts[1].second["message"] ==
        "2 devices of railyard.io healthy again: vf-a, vf-b (was: port mlx5_5/1 is not ACTIVE)");
}

TEST_CASE("node events: many devices are counted, not all named", "[dra]") {
  Recorder rec;
  railyard::kube::ApiClient api({.server = rec.http.url()});
  NodeEvents events(api, "n1", "tainted");
  std::vector<Device> devs;
  for (int i = 0; i < 14; ++i) devs.push_back(vf("vf-" + std::to_string(10 + i), false));
  events.update(devs, "u", "t");
  REQUIRE(rec.posts.size() == 1);
  CHECK_THAT(rec.posts[0].second["message"].get<std::string>(),
             Catch::Contains("14 devices") && Catch::Contains("vf-19 and 4 more"));
}
