// The publisher against a fake API server (plain HTTP on loopback, in a thread): the pool's
// slices created, replaced with the resourceVersion read, the stale ones deleted, a conflict
// read again, the generation carried over a restart, and the API server's message in errors.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>

#include "dra/publisher/publisher.h"
#include "dra/slices/slices.h"
#include "kube/api_client.h"
#include "test/support/http_stub.h"

using namespace railyard::dra;
namespace kube = railyard::kube;
using nlohmann::json;

namespace {

// The API server's side of the publisher's requests, over test/support's HTTP stand-in.
class FakeApiServer {
 public:
  FakeApiServer()
      : http_([this](const railyard::test::HttpStub::Request& r) { return answer(r); }) {}
  std::string url() const { return http_.url(); }

  std::mutex mu;
  std::map<std::string, json> slices;  // name -> object
  std::vector<std::string> log;        // "PUT /apis/..."
  int rv = 100;
  int conflicts = 0;       // the next N PUTs answer 409
  bool forbidden = false;  // every request answers 403
  int unavailable = 0;     // the next N requests answer 503 with Retry-After: 7
  std::string node_uid = "uid-n1";
  bool no_taints = false;  // drops devices' taints, as an API server without DRADeviceTaints
  bool odd_spec = false;   // answers writes with a spec that is no object (a broken server)

 private:
  railyard::test::HttpStub::Answer answer(const railyard::test::HttpStub::Request& r) {
    {
      std::lock_guard lock(mu);
      if (unavailable > 0) {
        --unavailable;
        return {503, {{"kind", "Status"}, {"message", "too busy"}}, "Retry-After: 7\r\n"};
      }
    }
    auto [status, out] = handle(r.method, r.target, r.body);
    return {status, out, ""};
  }

  json strip(json s) const {
    if (odd_spec) return {{"metadata", s["metadata"]}, {"spec", "not an object"}};
    if (no_taints)
      for (auto& d : s["spec"]["devices"]) d.erase("taints");
    return s;
  }

  std::pair<int, json> handle(const std::string& method, const std::string& target,
                              const std::string& body) {
    std::lock_guard lock(mu);
    log.push_back(method + " " + target);
    const std::string status_403 =
        "resourceslices.resource.k8s.io is forbidden: User "
        "\"system:serviceaccount:railyard-system:railyard-dra-driver\" cannot list resource "
        "\"resourceslices\" in API group \"resource.k8s.io\" at the cluster scope";
    if (forbidden)
      return {403,
              {{"kind", "Status"},
               {"status", "Failure"},
               {"message", status_403},
               {"reason", "Forbidden"},
               {"code", 403}}};
    const std::string base = kSlicesPath;
    if (method == "GET" && target == "/api/v1/nodes/n1")
      return {200, {{"kind", "Node"}, {"metadata", {{"name", "n1"}, {"uid", node_uid}}}}};
    if (method == "GET" && target.rfind(base + "?", 0) == 0) {
      json items = json::array();
      for (auto& [n, s] : slices)
        if (s["spec"]["nodeName"] == "n1") items.push_back(s);
      return {200, {{"kind", "ResourceSliceList"}, {"items", items}}};
    }
    if (method == "POST" && target == base) {
      json s = strip(json::parse(body));
      const std::string n = s["metadata"]["name"];
      if (slices.count(n)) return {409, {{"kind", "Status"}, {"message", "already exists"}}};
      s["metadata"]["resourceVersion"] = std::to_string(++rv);
      slices[n] = s;
      return {201, s};
    }
    const std::string name = target.substr(base.size() + 1);
    auto it = slices.find(name);
    if (method == "GET")
      return it == slices.end() ? std::pair<int, json>{404, {{"message", "not found"}}}
                                : std::pair<int, json>{200, it->second};
    if (method == "DELETE") {
      if (it == slices.end()) return {404, {{"message", "not found"}}};
      slices.erase(it);
      return {200, {{"kind", "Status"}, {"status", "Success"}}};
    }
    if (method == "PUT") {
      if (it == slices.end()) return {404, {{"message", "not found"}}};
      json s = strip(json::parse(body));
      if (conflicts > 0 ||
          s["metadata"].value("resourceVersion", "") != it->second["metadata"]["resourceVersion"]) {
        if (conflicts > 0) {
          --conflicts;
          it->second["metadata"]["resourceVersion"] = std::to_string(++rv);
        }
        return {409,
                {{"kind", "Status"},
                 {"message", "Operation cannot be fulfilled on resourceslices.resource.k8s.io \"" +
                                 name + "\": the object has been modified"}}};
      }
      s["metadata"]["resourceVersion"] = std::to_string(++rv);
      it->second = s;
      return {200, s};
    }
    return {405, {{"message", "unexpected " + method + " " + target}}};
  }

  railyard::test::HttpStub http_;  // last: it stops before the state it reads goes
};

std::vector<Device> devices(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) {
    Device d;
    d.name = "vf-" + std::to_string(i);
    d.type = DeviceType::kVf;
    d.attributes["railyard.io/rail"] = {{"int", i}};
    out.push_back(d);
  }
  return out;
}

std::vector<json> pool(const std::vector<Device>& devs, int64_t generation) {
  return build_slices(devs, {.node_name = "n1", .generation = generation, .max_devices = 2});
}

}  // namespace

TEST_CASE("publisher: creates, replaces with the resourceVersion, deletes stale slices") {
  FakeApiServer api;
  kube::ApiClient client({.server = api.url()});
  Publisher pub(client, "n1");
  pub.connect();
  CHECK(pub.last_generation() == 0);

  pub.publish(pool(devices(5), 1));  // 3 slices of at most 2
  {
    std::lock_guard lock(api.mu);
    REQUIRE(api.slices.size() == 3);
    const auto& s = api.slices.at("n1-railyard.io-0");
    CHECK(s["metadata"]["ownerReferences"][0] == json({{"apiVersion", "v1"},
                                                       {"kind", "Node"},
                                                       {"name", "n1"},
                                                       {"uid", "uid-n1"},
                                                       {"controller", true}}));
    CHECK(s["spec"]["pool"]["generation"] == 1);
    CHECK(s["spec"]["pool"]["resourceSliceCount"] == 3);
    api.log.clear();
  }

  pub.publish(pool(devices(3), 2));  // 2 slices: -0 and -1 replaced, -2 deleted
  std::lock_guard lock(api.mu);
  CHECK(api.slices.size() == 2);
  CHECK(api.slices.at("n1-railyard.io-1")["spec"]["pool"]["generation"] == 2);
  CHECK(api.slices.at("n1-railyard.io-1")["spec"]["devices"].size() == 1);
  CHECK(api.log == std::vector<std::string>{
                       "GET " + pool_list_path("n1"),
                       "PUT /apis/resource.k8s.io/v1/resourceslices/n1-railyard.io-0",
                       "PUT /apis/resource.k8s.io/v1/resourceslices/n1-railyard.io-1",
                       "DELETE /apis/resource.k8s.io/v1/resourceslices/n1-railyard.io-2"});
  CHECK(pub.last_generation() == 2);
}

TEST_CASE("publisher: counts the taints an API server without device taints dropped") {
  FakeApiServer api;
  kube::ApiClient client({.server = api.url()});
  Publisher pub(client, "n1");
  pub.connect();
  auto devs = devices(3);
  devs[1].healthy = false;
  devs[1].fault = railyard::deviceplugin::Fault::kPortDown;
  pub.publish(pool(devs, 1));
  CHECK(pub.taints_dropped() == 0);
  {
    std::lock_guard lock(api.mu);
    CHECK(api.slices.at("n1-railyard.io-0")["spec"]["devices"][1]["taints"][0]["key"] ==
          "railyard.io/rail-down");
    api.no_taints = true;
  }
  pub.publish(pool(devs, 2));
  CHECK(pub.taints_dropped() == 1);
  pub.publish(pool(devices(3), 3));  // nothing tainted: nothing to drop
  CHECK(pub.taints_dropped() == 0);
  {
    std::lock_guard lock(api.mu);
    api.odd_spec = true;
  }
  pub.publish(pool(devs, 4));  // an answer of the wrong shape is no crash and no verdict
  CHECK(pub.taints_dropped() == 0);
}

TEST_CASE("publisher: a conflict is read again once, a restart publishes above the pool") {
  FakeApiServer api;
  kube::ApiClient client({.server = api.url()});
  {
    Publisher pub(client, "n1");
    pub.connect();
    pub.publish(pool(devices(2), 7));
    std::lock_guard lock(api.mu);
    api.conflicts = 1;
  }
  Publisher again(client, "n1");
  again.connect();
  CHECK(again.last_generation() == 7);
  again.publish(pool(devices(1), again.last_generation() + 1));
  std::lock_guard lock(api.mu);
  CHECK(api.slices.at("n1-railyard.io-0")["spec"]["pool"]["generation"] == 8);
  CHECK(api.slices.at("n1-railyard.io-0")["spec"]["devices"].size() == 1);
  CHECK(api.slices.size() == 1);
}

TEST_CASE("publisher: in_sync tells a pool deleted or changed by someone else") {
  FakeApiServer api;
  kube::ApiClient client({.server = api.url()});
  Publisher pub(client, "n1");
  pub.connect();
  pub.publish(pool(devices(3), 1));
  CHECK(pub.in_sync());
  {
    std::lock_guard lock(api.mu);
    api.slices.at("n1-railyard.io-1")["spec"]["devices"] = json::array();
  }
  CHECK_FALSE(pub.in_sync());
  pub.publish(pool(devices(3), 2));
  CHECK(pub.in_sync());
  {
    std::lock_guard lock(api.mu);
    api.slices.erase("n1-railyard.io-0");
  }
  CHECK_FALSE(pub.in_sync());
}

TEST_CASE("publisher: remove_all deletes the pool") {
  FakeApiServer api;
  kube::ApiClient client({.server = api.url()});
  Publisher pub(client, "n1");
  pub.connect();
  pub.publish(pool(devices(5), 1));
  CHECK(pub.remove_all() == 3);
  std::lock_guard lock(api.mu);
  CHECK(api.slices.empty());
}

TEST_CASE("apiserver: errors carry the HTTP status and the API server's message") {
  FakeApiServer api;
  {
    std::lock_guard lock(api.mu);
    api.forbidden = true;
  }
  kube::ApiClient client({.server = api.url()});
  Publisher pub(client, "n1");
  try {
    pub.connect();
    FAIL("connect did not throw");
  } catch (const kube::ApiError& e) {
    CHECK(e.status() == 403);
    CHECK(std::string(e.what()) ==
          "GET /api/v1/nodes/n1: HTTP 403 Forbidden: resourceslices.resource.k8s.io is "
          "forbidden: User \"system:serviceaccount:railyard-system:railyard-dra-driver\" cannot "
          "list resource \"resourceslices\" in API group \"resource.k8s.io\" at the cluster scope");
  }
  kube::ApiClient nowhere({.server = "http://127.0.0.1:1"});
  const auto r = nowhere.request("GET", "/api/v1/nodes/n1");
  CHECK(r.status == 0);
  CHECK(r.message().find("http://127.0.0.1:1: ") == 0);
}

TEST_CASE("apiserver: in-cluster configuration and the pool's field selector") {
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = kube::in_cluster_config();
  CHECK(c.server == "https://10.96.0.1:443");
  CHECK(c.token_file == "/var/run/secrets/kubernetes.io/serviceaccount/token");
  CHECK(c.ca_file == "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  CHECK(kube::in_cluster_config().server == "https://[fd00::1]:443");
  CHECK(kube::in_cluster_config({.server = "https://x:6443/"}).server == "https://x:6443");
  unsetenv("KUBERNETES_SERVICE_HOST");
  CHECK_THROWS(kube::in_cluster_config());
  CHECK(pool_list_path("n1") ==
        "/apis/resource.k8s.io/v1/resourceslices?fieldSelector="
        "spec.nodeName%3Dn1%2Cspec.driver%3Drailyard.io");
}

TEST_CASE("publisher: a Node registered again (a new uid) is followed at the next resync") {
  FakeApiServer api;
  kube::ApiClient client({.server = api.url()});
  Publisher pub(client, "n1");
  pub.connect();
  pub.publish(pool(devices(3), 1));
  CHECK(pub.in_sync());
  {
    std::lock_guard lock(api.mu);
    api.node_uid = "uid-n1-again";
  }
  CHECK_FALSE(pub.in_sync());  // slices owned by the old Node go with it: publish again
  CHECK(pub.node_uid() == "uid-n1-again");
  pub.publish(pool(devices(3), 2));
  std::lock_guard lock(api.mu);
  REQUIRE(api.slices.size() == 2);
  for (const auto& [name, s] : api.slices)
    CHECK(s["metadata"]["ownerReferences"][0]["uid"] == "uid-n1-again");
}

TEST_CASE("apiserver: 503 with Retry-After backs off as asked, other errors double up to a cap") {
  FakeApiServer api;
  {
    std::lock_guard lock(api.mu);
    api.unavailable = 1;
  }
  kube::ApiClient client({.server = api.url()});
  Publisher pub(client, "n1");
  std::optional<long> asked;
  try {
    pub.connect();
    FAIL("connect did not throw");
  } catch (const kube::ApiError& e) {
    CHECK(e.status() == 503);
    asked = e.retry_after_s();
  }
  CHECK(asked == 7);
  pub.connect();  // the server is back

  using std::chrono::milliseconds;
  kube::Backoff b(milliseconds(1000), milliseconds(60000));
  CHECK(b.after_failure() == milliseconds(1000));
  CHECK(b.after_failure() == milliseconds(2000));
  CHECK(b.after_failure(7) == milliseconds(7000));  // the server's wish over our 4 s
  CHECK(b.after_failure() == milliseconds(8000));
  for (int i = 0; i < 10; ++i) b.after_failure();
  CHECK(b.after_failure() == milliseconds(60000));           // capped
  CHECK(b.after_failure(86400) == milliseconds(5 * 60000));  // a server's day is five minutes
  b.succeeded();
  CHECK(b.after_failure() == milliseconds(1000));
}
