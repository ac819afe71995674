// --apply against an API server stand-in that keeps a Node, this node's ResourceSlices and the
// DeviceTaintRules: a slow rail becomes one rule per NIC device of that rail and nothing else, a
// pass removes only what railyard-validate made, a node-wide failure sets the bring-up taint, and
// a refused request (403, 500) leaves the cluster as it was.
#include <catch2/catch.hpp>
#include <mutex>

#include "common/k8s_names.h"
#include "nccl-tests-wrapper/apply/cluster.h"
#include "test/support/http_stub.h"

using namespace railyard::validate;
using nlohmann::json;
using railyard::test::HttpStub;

namespace {

const std::string kRules = kDeviceTaintRulesPath;

json device(const std::string& name, const std::string& type, json rail) {
  return {{"name", name},
          {"attributes",
           {{"railyard.io/type", {{"string", type}}}, {"railyard.io/rail", {{"int", rail}}}}}};
}

class FakeCluster {
 public:
  FakeCluster() : http_([this](const HttpStub::Request& r) { return answer(r); }) {
    node = {{"kind", "Node"},
            {"metadata", {{"name", "n1"}, {"resourceVersion", "7"}, {"labels", {{"a", "b"}}}}},
            {"spec", {{"taints", json::array({{{"key", "other"}, {"effect", "NoExecute"}}})}}}};
    slices = json::array(
        {{{"spec",
           {{"nodeName", "n1"},
            {"driver", "railyard.io"},
            {"devices", json::array({device("gpu-5", "gpu", 5), device("nic-5", "nic", 5),
                                     device("vf-5a", "vf", 5), device("vf-5b", "vf", 5),
                                     device("nic-4", "nic", 4), device("Bad/Name", "vf", 5),
                                     device("vf-odd", "vf", "5")})}}}}});
    // Entries of shapes the driver never writes: skipped, never a crash.
    slices[0]["spec"]["devices"].push_back({{"name", 7}});
    slices[0]["spec"]["devices"].push_back(
        {{"name", "vf-flat"},
         {"attributes", {{"railyard.io/rail", 5}, {"railyard.io/type", "vf"}}}});
    slices.push_back("not a slice");
    // Someone else's rule on the same device: never ours to touch.
    rules["foreign"] = {{"metadata", {{"name", "foreign"}, {"resourceVersion", "1"}}},
                        {"spec",
                         {{"deviceSelector", {{"driver", "railyard.io"}, {"pool", "n1"}}},
                          {"taint", {{"key", "x"}, {"effect", "NoSchedule"}}}}}};
  }
  std::string url() const { return http_.url(); }

  std::mutex mu;
  json node, slices;
  std::map<std::string, json> rules;
  std::vector<std::string> log;
  int rv = 100;
  int forbid_create_after = -1;  // creates allowed before the 403s start; -1: never
  bool node_patch_fails = false;
  int node_conflicts = 0;
  std::string patch_content_type;

  std::vector<std::string> our_rule_names() {
    std::lock_guard lock(mu);
    std::vector<std::string> out;
    for (auto& [n, r] : rules)
      if (r["metadata"].value("labels", json::object()).value("app.kubernetes.io/managed-by", "") ==
          "railyard-validate")
        out.push_back(n);
    return out;
  }

 private:
  HttpStub::Answer answer(const HttpStub::Request& r) {
    std::lock_guard lock(mu);
    log.push_back(r.method + " " + r.target);
    auto status = [](int code, const std::string& msg) {
      return HttpStub::Answer{code, {{"kind", "Status"}, {"message", msg}}, ""};
    };
    if (r.target == "/api/v1/nodes/n1") {
      if (r.method == "GET") return {200, node, ""};
      if (r.method == "PATCH") {
        patch_content_type = r.content_type;
        if (node_patch_fails) return status(500, "etcdserver: request timed out");
        json p = json::parse(r.body);
        if (node_conflicts > 0) {
          --node_conflicts;
          node["metadata"]["resourceVersion"] = std::to_string(++rv);
        }
        if (p["metadata"].value("resourceVersion", "") != node["metadata"]["resourceVersion"])
          return status(409, "the object has been modified");
        node.merge_patch(p);
        node["metadata"]["resourceVersion"] = std::to_string(++rv);
        return {200, node, ""};
      }
    }
    if (r.method == "GET" && r.target.rfind("/apis/resource.k8s.io/v1/resourceslices?", 0) == 0)
      return {200, {{"items", slices}}, ""};
    if (r.method == "GET" && r.target.rfind(kRules + "?labelSelector=", 0) == 0) {
      json items = json::array();
      for (auto& [n, rule] : rules) items.push_back(rule);  // the filter is the client's to check
      return {200, {{"items", items}}, ""};
    }
    if (r.method == "POST" && r.target == kRules) {
      if (forbid_create_after == 0)
        return status(403,
                      "devicetaintrules.resource.k8s.io is forbidden: User "
                      "\"system:serviceaccount:railyard-system:railyard-validate\" cannot create "
                      "resource \"devicetaintrules\"");
      if (forbid_create_after > 0) --forbid_create_after;
      json rule = json::parse(r.body);
      const std::string n = rule["metadata"]["name"];
      if (rules.count(n)) return status(409, "already exists");
      rule["metadata"]["resourceVersion"] = std::to_string(++rv);
      rules[n] = rule;
      return {201, rule, ""};
    }
    const std::string name = r.target.substr(kRules.size() + 1);
    auto it = rules.find(name);
    if (r.target.rfind(kRules + "/", 0) == 0) {
      if (it == rules.end()) return status(404, "not found");
      if (r.method == "GET") return {200, it->second, ""};
      if (r.method == "DELETE") {
        rules.erase(it);
        return {200, {{"kind", "Status"}, {"status", "Success"}}, ""};
      }
      if (r.method == "PUT") {
        json rule = json::parse(r.body);
        if (rule["metadata"].value("resourceVersion", "") !=
            it->second["metadata"]["resourceVersion"])
          return status(409, "the object has been modified");
        rule["metadata"]["resourceVersion"] = std::to_string(++rv);
        it->second = rule;
        return {200, rule, ""};
      }
    }
    return status(405, "unexpected " + r.method + " " + r.target);
  }

  HttpStub http_;  // last: it stops before the state it reads goes
};

NodeJudgement slow_rail5() {
  NodeJudgement j;
  j.node = "n1";
  j.verdict = Verdict::kFail;
  j.rails = {{5, "slow", {"rail 5 (mlx5_5): busbw 2.1 GB/s is 21% of the median rail's 10 GB/s"}}};
  return j;
}

const ApplyOptions kOptions{"2026-12-07T18:00:00Z", "NoSchedule"};

}  // namespace

TEST_CASE("apply: a slow rail becomes one rule per NIC device of that rail", "[validate][apply]") {
  FakeCluster k;
  railyard::kube::ApiClient api({.server = k.url()});
  const auto r = apply_judgement(api, slow_rail5(), kOptions);
  INFO(r.error);
  REQUIRE(r.ok);
  // The PF and both VFs of rail 5; not its GPU, not rail 4, not the names the driver cannot write.
  CHECK(k.our_rule_names() == std::vector<std::string>{rule_name("n1", "nic-5"),
                                                       rule_name("n1", "vf-5a"),
                                                       rule_name("n1", "vf-5b")});
  std::lock_guard lock(k.mu);
  const json& rule = k.rules.at(rule_name("n1", "vf-5a"));
  CHECK(rule["spec"]["deviceSelector"] ==
        json({{"driver", "railyard.io"}, {"pool", "n1"}, {"device", "vf-5a"}}));
  CHECK(rule["spec"]["taint"] ==
        json({{"key", "railyard.io/validation"}, {"value", "slow"}, {"effect", "NoSchedule"}}));
  CHECK(rule["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "railyard-validate");
  CHECK_THAT(rule["metadata"]["annotations"]["railyard.io/evidence"].get<std::string>(),
             Catch::Contains("21% of the median rail"));
  // The node: labelled false with the reason, but not tainted: its other rails stay schedulable.
  CHECK(k.node["metadata"]["labels"]["railyard.io/validated"] == "false");
  CHECK(k.node["metadata"]["labels"]["a"] == "b");
  CHECK(k.node["metadata"]["annotations"]["railyard.io/validated-at"] == "2026-12-07T18:00:00Z");
  CHECK_THAT(k.node["metadata"]["annotations"]["railyard.io/validation-reason"].get<std::string>(),
             Catch::Contains("rail 5 slow"));
  CHECK(k.node["spec"]["taints"].size() == 1);
  CHECK(k.patch_content_type == "application/merge-patch+json");
  CHECK(k.rules.count("foreign") == 1);
}

TEST_CASE("apply: a pass removes only our rules and the bring-up taint", "[validate][apply]") {
  FakeCluster k;
  railyard::kube::ApiClient api({.server = k.url()});
  {
    std::lock_guard lock(k.mu);
    k.node["spec"]["taints"].push_back(
        {{"key", "railyard.io/unvalidated"}, {"effect", "NoSchedule"}});
  }
  REQUIRE(apply_judgement(api, slow_rail5(), kOptions).ok);
  {
    std::lock_guard lock(k.mu);
    CHECK(k.node["spec"]["taints"].size() == 2);  // a failing rail keeps a gated node gated
  }
  // The same run again changes no rule.
  auto again = apply_judgement(api, slow_rail5(), kOptions);
  REQUIRE(again.ok);
  for (const auto& a : again.actions) CHECK_THAT(a, !Catch::Contains("DeviceTaintRule"));

  NodeJudgement pass{"n1", Verdict::kPass, {}, {}, {}};
  const auto r = apply_judgement(api, pass, kOptions);
  REQUIRE(r.ok);
  CHECK(k.our_rule_names().empty());
  std::lock_guard lock(k.mu);
  CHECK(k.rules.count("foreign") == 1);
  CHECK(k.node["metadata"]["labels"]["railyard.io/validated"] == "true");
  CHECK(k.node["spec"]["taints"] == json::array({{{"key", "other"}, {"effect", "NoExecute"}}}));
}

TEST_CASE("apply: a failure no rail explains sets the bring-up taint", "[validate][apply]") {
  FakeCluster k;
  railyard::kube::ApiClient api({.server = k.url()});
  NodeJudgement j{"n1", Verdict::kFail, {}, {"all rails: busbw 3 GB/s across 8 rails"}, {}};
  REQUIRE(apply_judgement(api, j, kOptions).ok);
  CHECK(k.our_rule_names().empty());
  std::lock_guard lock(k.mu);
  CHECK(k.node["spec"]["taints"][1] ==
        json({{"key", "railyard.io/unvalidated"}, {"effect", "NoSchedule"}}));
  CHECK(k.node["metadata"]["labels"]["railyard.io/validated"] == "false");
}

TEST_CASE("apply: a 403 on the second rule leaves no rule, label or taint", "[validate][apply]") {
  FakeCluster k;
  k.forbid_create_after = 1;
  railyard::kube::ApiClient api({.server = k.url()});
  const auto r = apply_judgement(api, slow_rail5(), kOptions);
  CHECK_FALSE(r.ok);
  CHECK(r.status == 403);
  CHECK_THAT(r.error, Catch::Contains("POST DeviceTaintRule railyard-validation.vf-5a.n1"));
  CHECK_THAT(r.error, Catch::Contains("cannot create resource \"devicetaintrules\""));
  CHECK(r.actions.empty());
  CHECK(k.our_rule_names().empty());
  std::lock_guard lock(k.mu);
  CHECK_FALSE(k.node["metadata"]["labels"].contains("railyard.io/validated"));
  CHECK(k.node["metadata"]["resourceVersion"] == "7");  // never patched
}

TEST_CASE("apply: a refused Node patch puts the rules back as they were", "[validate][apply]") {
  FakeCluster k;
  railyard::kube::ApiClient api({.server = k.url()});
  // A rule from an earlier run on rail 4, which now passes: this run would delete it.
  NodeJudgement earlier = slow_rail5();
  earlier.rails[0].rail = 4;
  REQUIRE(apply_judgement(api, earlier, kOptions).ok);
  REQUIRE(k.our_rule_names() == std::vector<std::string>{rule_name("n1", "nic-4")});
  {
    std::lock_guard lock(k.mu);
    k.node_patch_fails = true;
  }
  const auto r = apply_judgement(api, slow_rail5(), kOptions);
  CHECK_FALSE(r.ok);
  CHECK(r.status == 500);
  CHECK_THAT(r.error, Catch::Contains("PATCH Node n1: HTTP 500"));
  CHECK_THAT(r.error, Catch::Contains("etcdserver: request timed out"));
  CHECK(k.our_rule_names() == std::vector<std::string>{rule_name("n1", "nic-4")});
}

TEST_CASE("apply: a Node changed under the patch is read again", "[validate][apply]") {
  FakeCluster k;
  k.node_conflicts = 2;
  railyard::kube::ApiClient api({.server = k.url()});
  REQUIRE(apply_judgement(api, {"n1", Verdict::kPass, {}, {}, {}}, kOptions).ok);
  std::lock_guard lock(k.mu);
  CHECK(k.node["metadata"]["labels"]["railyard.io/validated"] == "true");
}

TEST_CASE("apply: a run that could not run changes nothing", "[validate][apply]") {
  FakeCluster k;
  railyard::kube::ApiClient api({.server = k.url()});
  NodeJudgement j{"n1", Verdict::kCouldNotRun, {}, {}, "could not start all_reduce_perf"};
  const auto r = apply_judgement(api, j, kOptions);
  CHECK(r.ok);
  CHECK_THAT(r.notes.at(0), Catch::Contains("changed nothing"));
  std::lock_guard lock(k.mu);
  CHECK(k.log.empty());
}

TEST_CASE("apply: names that cannot go into the API are refused before any request",
          "[validate][apply]") {
  FakeCluster k;
  railyard::kube::ApiClient api({.server = k.url()});
  NodeJudgement bad_node = slow_rail5();
  bad_node.node = "N1/../x";
  CHECK_FALSE(apply_judgement(api, bad_node, kOptions).ok);
  NodeJudgement bad_value = slow_rail5();
  bad_value.rails[0].value = "slow rail!";
  CHECK_FALSE(apply_judgement(api, bad_value, kOptions).ok);
  std::lock_guard lock(k.mu);
  CHECK(k.log.empty());
  const std::string label(60, 'a');
  const std::string long_node = label + "." + label + "." + label + "." + label;
  const std::string name = rule_name(long_node, "vf-5a");
  CHECK(name.size() <= 253);
  CHECK(railyard::is_dns1123_subdomain(name));
  CHECK(name != rule_name(long_node + "b", "vf-5a"));
}

TEST_CASE("judgement: a node's failed rails and what no rail explains", "[validate][apply]") {
  Report r;
  r.verdict = Verdict::kFail;
  Finding port{"rail 2 (mlx5_2)", "port", State::kFail, "port 1 DOWN"};
  port.rail = 2;
  r.checks = {port, Finding{"node", "gpudirect", State::kFail, "nvidia_peermem not loaded"},
              Finding{"rail 1 (mlx5_1)", "mtu", State::kWarn, "a warning"}};
  RunOutcome slow;
  slow.name = "rail 5 (mlx5_5)";
  slow.rail = 5;
  slow.problems = {"busbw 2 GB/s is 20% of the median rail's 10 GB/s"};
  RunOutcome all;
  all.name = "all rails";
  all.problems = {"timed out after 60 s"};
  r.runs = {slow, all};
  const auto j = judge_node(r, "n1");
  REQUIRE(j.rails.size() == 2);
  CHECK(j.rails[0].rail == 2);
  CHECK(j.rails[0].value == "port-down");
  CHECK(j.rails[1].value == "slow");
  CHECK(j.node_failures == std::vector<std::string>{"node gpudirect: nvidia_peermem not loaded",
                                                    "all rails: timed out after 60 s"});
  Report cannot;
  cannot.verdict = Verdict::kCouldNotRun;
  cannot.reason = "no rails on this node";
  CHECK(judge_node(cannot, "n1").could_not_run == "no rails on this node");
}

TEST_CASE("judgement: a fleet's culprits land on the nodes and rails they name",
          "[validate][apply]") {
  FleetReport f;
  f.nodes = {"a", "b", "c", "d"};
  f.rails = 4;
  f.culprits = {{"nic", 1, -1, 2, -1, "b rail 2 slow to everyone"},
                {"cable", 0, 2, 1, -1, "a - c on rail 1"},
                {"miswire", 3, -1, 0, 1, "d rail 0 hears rail 1's leaf"},
                {"leaf", -1, -1, 3, -1, "rail 3's leaf"},
                {"node", 3, -1, -1, -1, "d slow on every rail"}};
  const auto j = judge_fleet(f);
  REQUIRE(j.size() == 4);
  CHECK(j[0].rails.size() == 1);
  CHECK(j[0].rails[0].value == "cable");
  CHECK(j[1].rails.at(0).rail == 2);
  CHECK(j[1].rails.at(0).value == "nic");
  CHECK(j[2].rails.at(0).value == "cable");
  CHECK(j[3].rails.at(0).value == "miswire");
  CHECK(j[3].node_failures.size() == 1);
  FleetReport passing = f;
  passing.culprits.clear();
  for (const auto& n : judge_fleet(passing)) CHECK(n.verdict == Verdict::kPass);
  FleetReport lost = f;
  lost.could_not_run = "rank 2 never joined";
  CHECK(judge_fleet(lost).empty());
}

TEST_CASE("apply: a rule list of the wrong shape fails the run and undoes it",
          "[validate][apply]") {
  FakeCluster k;
  railyard::kube::ApiClient api({.server = k.url()});
  {
    std::lock_guard lock(k.mu);
    k.rules["odd"] = {
        {"metadata",
         {{"name", "odd"}, {"labels", {{"app.kubernetes.io/managed-by", "railyard-validate"}}}}},
        {"spec", {{"deviceSelector", {{"driver", "railyard.io"}, {"pool", 42}}}}}};
  }
  const auto r = apply_judgement(api, slow_rail5(), kOptions);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Contains("unexpected shape"));
  CHECK(k.our_rule_names() == std::vector<std::string>{"odd"});
}

TEST_CASE("apply: an API server without DeviceTaintRules is said so, and the node untouched",
          "[validate][apply]") {
  railyard::test::HttpStub api_server([](const HttpStub::Request& r) -> HttpStub::Answer {
    if (r.target.rfind("/apis/resource.k8s.io/v1/resourceslices?", 0) == 0)
      return {
          200,
          {{"items", json::array({{{"spec",
                                    {{"nodeName", "n1"},
                                     {"driver", "railyard.io"},
                                     {"devices", json::array({device("nic-5", "nic", 5)})}}}}})}},
          ""};
    if (r.method == "GET" && r.target == "/api/v1/nodes/n1")
      return {200, {{"metadata", {{"name", "n1"}}}}, ""};
    return {404,
            {{"kind", "Status"}, {"message", "the server could not find the requested resource"}},
            ""};
  });
  railyard::kube::ApiClient api({.server = api_server.url()});
  const auto r = apply_judgement(api, slow_rail5(), kOptions);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Contains("DRADeviceTaintRules"));
}

TEST_CASE("judgement: fleet ranks on one node are judged as that one node", "[validate][apply]") {
  FleetReport f;
  f.nodes = {"same", "same"};
  f.rails = 8;
  f.culprits = {{"nic", 1, -1, 5, -1, "rank 1's rail 5 slow"}};
  const auto j = judge_fleet(f);
  REQUIRE(j.size() == 1);
  CHECK(j[0].verdict == Verdict::kFail);
  CHECK(j[0].rails.at(0).rail == 5);
}

TEST_CASE("judgement: the device plugin's findings name each failed rail", "[validate][apply]") {
  const auto f = rail_findings(slow_rail5(), "2026-12-07T18:00:00Z");
  CHECK(f.verdict == "fail");
  CHECK(f.failed.at(5) ==
        "slow: rail 5 (mlx5_5): busbw 2.1 GB/s is 21% of the median rail's 10 GB/s");
  CHECK(rail_findings({"n1", Verdict::kPass, {}, {}, {}}, "t").failed.empty());
}
