#include "nccl-tests-wrapper/apply/cluster.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>

#include "common/k8s_names.h"

namespace railyard::validate {

using json = nlohmann::json;

namespace {

constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
using kube::kEvidenceAnnotation;
constexpr const char* kValidatedAt = "railyard.io/validated-at";
constexpr const char* kReasonAnnotation = "railyard.io/validation-reason";
constexpr const char* kDriver = "railyard.io";
constexpr size_t kMaxAnnotation = 8192;  // the evidence a person reads; the report has the rest
constexpr int kNodeAttempts = 3;         // a Node changes under us (the kubelet's heartbeats)

// A failed request: the run stops and undoes what it did.
struct Refused {
  std::string what;
  kube::ApiResponse response;
};

json call(kube::ApiClient& api, const char* method, const std::string& path,
          const std::string& what, const json* body = nullptr) {
  auto r = api.request(method, path, body);
  if (!r.ok()) throw Refused{std::string(method) + " " + what, std::move(r)};
  return r.json();
}

std::string capped(std::string s) {
  if (s.size() > kMaxAnnotation) s = s.substr(0, kMaxAnnotation - 3) + "...";
  return s;
}

std::string joined(const std::vector<std::string>& lines, const char* sep) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : sep) + l;
  return out;
}

// FNV-1a: a short, stable suffix for names too long to carry whole.
std::string short_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 10);
}

// A device attribute's value ({"int": 5} -> 5); null when the shape is not the API's.
json attribute(const json& attributes, const char* name, const char* kind) {
  const auto it = attributes.find(name);
  if (it == attributes.end() || !it->is_object() || !it->contains(kind)) return nullptr;
  return (*it)[kind];
}

// This node's railyard.io devices by rail, as its ResourceSlices publish them: the names a rule
// must select. GPUs are left out (a rail's finding is its NIC's), and so is any entry whose shape
// or name is not what the driver writes.
std::map<int, std::vector<std::string>> devices_by_rail(kube::ApiClient& api,
                                                        const std::string& node) {
  const std::string path = "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=" +
                           kube::url_escape("spec.nodeName=" + node + ",spec.driver=" + kDriver);
  const json list = call(api, "GET", path, "ResourceSlices of node " + node);
  std::map<int, std::vector<std::string>> out;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const auto& slice : list["items"]) {
    const json* devices = nullptr;
    if (slice.is_object() && slice.contains("spec") && slice["spec"].is_object() &&
        slice["spec"].value("nodeName", "") == node &&
        slice["spec"].value("driver", "") == kDriver && slice["spec"].contains("devices") &&
        slice["spec"]["devices"].is_array())
      devices = &slice["spec"]["devices"];
    if (!devices) continue;
    for (const auto& d : *devices) {
      if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) continue;
      const std::string name = d["name"];
      if (!is_dns1123_label(name) || !d.contains("attributes") || !d["attributes"].is_object())
        continue;
      const json rail = attribute(d["attributes"], kube::attr::kRail, "int");
      const json type = attribute(d["attributes"], kube::attr::kType, "string");
      if (!rail.is_number_integer() || (type.is_string() && type == "gpu")) continue;
      out[rail.get<int>()].push_back(name);
    }
  }
  for (auto& [rail, names] : out) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  return out;
}

json rule_object(const std::string& node, const std::string& device, const RailCall& call,
                 const ApplyOptions& o) {
  return {
      {"apiVersion", "resource.k8s.io/v1beta2"},
      {"kind", "DeviceTaintRule"},
      {"metadata",
       {{"name", rule_name(node, device)},
        {"labels", {{kManagedByLabel, kManagedBy}, {kube::attr::kRail, std::to_string(call.rail)}}},
        {"annotations",
         {{kEvidenceAnnotation, capped(joined(call.evidence, "\n"))}, {kValidatedAt, o.now}}}}},
      {"spec",
       {{"deviceSelector", {{"driver", kDriver}, {"pool", node}, {"device", device}}},
        {"taint", {{"key", kValidationTaint}, {"value", call.value}, {"effect", o.effect}}}}}};
}

// The rules railyard-validate made for this node's pool before: ours by label and by selector.
// nullopt when the API server does not serve DeviceTaintRules (404: the DRADeviceTaintRules gate
// or resource.k8s.io/v1beta2 is off).
std::optional<std::map<std::string, json>> our_rules(kube::ApiClient& api,
                                                     const std::string& node) {
  const std::string path = std::string(kDeviceTaintRulesPath) + "?labelSelector=" +
                           kube::url_escape(std::string(kManagedByLabel) + "=" + kManagedBy);
  auto r = api.request("GET", path);
  if (r.status == 404) return std::nullopt;
  if (!r.ok()) throw Refused{"GET DeviceTaintRules", std::move(r)};
  const json list = r.json();
  std::map<std::string, json> out;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const auto& r : list["items"]) {
    if (!r.is_object() || !r.contains("metadata") || !r["metadata"].is_object()) continue;
    const json& m = r["metadata"];
    const json labels = m.value("labels", json::object());
    if (!labels.is_object() || labels.value(kManagedByLabel, "") != kManagedBy) continue;
    const json sel = r.value("spec", json::object()).value("deviceSelector", json::object());
    if (!sel.is_object() || sel.value("pool", "") != node || sel.value("driver", "") != kDriver)
      continue;
    const std::string name = m.value("name", "");
    if (is_dns1123_subdomain(name)) out[name] = r;
  }
  return out;
}

bool same_rule(const json& have, const json& want) {
  const json& ha = have["metadata"].value("annotations", json::object());
  return have.value("spec", json()) == want["spec"] && ha.is_object() &&
         ha.value(kEvidenceAnnotation, "") == want["metadata"]["annotations"][kEvidenceAnnotation];
}

// An object as it can be created again: what the server stamped taken out.
json recreatable(json obj) {
  if (obj.contains("metadata") && obj["metadata"].is_object())
    for (const char* k :
         {"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"})
      obj["metadata"].erase(k);
  obj.erase("status");
  return obj;
}

// What this run changed, to be undone in reverse when a later request is refused.
struct Undo {
  std::vector<std::string> created;
  std::vector<json> replaced;  // the object before the PUT
  std::vector<json> deleted;

  std::vector<std::string> run(kube::ApiClient& api) {
    std::vector<std::string> failures;
    const std::string base = kDeviceTaintRulesPath;
    for (const auto& name : created) {
      auto r = api.request("DELETE", base + "/" + name);
      if (!r.ok() && r.status != 404) failures.push_back("delete " + name + ": " + r.message());
    }
    for (const auto& old : replaced) {
      const std::string name = old["metadata"]["name"];
      auto cur = api.request("GET", base + "/" + name);
      json back = recreatable(old);
      if (cur.ok() && cur.json().is_object())
        back["metadata"]["resourceVersion"] = cur.json()["metadata"].value("resourceVersion", "");
      auto r = api.request("PUT", base + "/" + name, &back);
      if (!r.ok()) failures.push_back("restore " + name + ": " + r.message());
    }
    for (const auto& old : deleted) {
      const json back = recreatable(old);
      auto r = api.request("POST", base, &back);
      if (!r.ok() && r.status != 409)
        failures.push_back("re-create " + back["metadata"].value("name", "") + ": " + r.message());
    }
    return failures;
  }
};

// The Node's taints with railyard.io/unvalidated set or removed; nullopt when nothing changes.
std::optional<json> taints_with(const json& node, bool unvalidated) {
  json taints = json::array();
  const json spec = node.value("spec", json::object());
  if (spec.is_object() && spec.contains("taints") && spec["taints"].is_array())
    taints = spec["taints"];
  const auto ours = [](const json& t) {
    return t.is_object() && t.value("key", "") == kUnvalidatedTaint;
  };
  const bool has = std::any_of(taints.begin(), taints.end(), ours);
  if (has == unvalidated) return std::nullopt;
  if (unvalidated) {
    taints.push_back({{"key", kUnvalidatedTaint}, {"effect", "NoSchedule"}});
  } else {
    json kept = json::array();
    for (const auto& t : taints)
      if (!ours(t)) kept.push_back(t);
    taints = kept;
  }
  return taints;
}

// Label, annotations and (maybe) the bring-up taint, as one merge patch that names the
// resourceVersion it was computed from: a Node changed in between answers 409 and is read again.
void patch_node(kube::ApiClient& api, const NodeJudgement& j, const ApplyOptions& o,
                ApplyResult& result) {
  const std::string path = "/api/v1/nodes/" + j.node;
  const bool pass = j.verdict == Verdict::kPass;
  std::vector<std::string> reasons = j.node_failures;
  for (const auto& c : j.rails)
    reasons.push_back("rail " + std::to_string(c.rail) + " " + c.value + ": " +
                      joined(c.evidence, "; "));
  const std::string reason = pass ? "every rail passed" : capped(joined(reasons, "\n"));
  for (int attempt = 1;; ++attempt) {
    const json node = call(api, "GET", path, "Node " + j.node);
    if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object())
      throw Refused{"GET Node " + j.node, {200, "the API server's answer is not a Node", {}}};
    // The taint goes on for what no rail explains, and comes off only on a pass: a node under the
    // bring-up gate stays there while any rail fails.
    std::optional<json> taints;
    if (pass)
      taints = taints_with(node, false);
    else if (!j.node_failures.empty())
      taints = taints_with(node, true);
    json patch = {{"metadata",
                   {{"resourceVersion", node["metadata"].value("resourceVersion", "")},
                    {"labels", {{kValidatedLabel, pass ? "true" : "false"}}},
                    {"annotations", {{kValidatedAt, o.now}, {kReasonAnnotation, reason}}}}}};
    if (taints) patch["spec"] = {{"taints", *taints}};
    auto r = api.request("PATCH", path, &patch);
    if (r.ok()) {
      result.actions.push_back("labelled Node " + j.node + " " + kValidatedLabel + "=" +
                               (pass ? "true" : "false"));
      if (taints)
        result.actions.push_back(std::string(pass ? "removed" : "added") + " taint " +
                                 kUnvalidatedTaint + ":NoSchedule on Node " + j.node);
      return;
    }
    if (r.status != 409 || attempt == kNodeAttempts)
      throw Refused{"PATCH Node " + j.node, std::move(r)};
  }
}

}  // namespace

std::string rule_name(const std::string& node, const std::string& device) {
  // Both are DNS names already; joined by a dot they stay one. Too long: the node cut short and a
  // hash of the whole, still unique.
  std::string name = "railyard-validation." + device + "." + node;
  if (name.size() > 253) {
    std::string cut = node.substr(0, 200);
    while (!cut.empty() && !std::isalnum(static_cast<unsigned char>(cut.back()))) cut.pop_back();
    name = "railyard-validation." + device + "." + cut + "." + short_hash(node);
  }
  return name;
}

ApplyResult apply_judgement(kube::ApiClient& api, const NodeJudgement& j, const ApplyOptions& o) {
  ApplyResult result;
  if (j.verdict == Verdict::kCouldNotRun) {
    result.notes.push_back("changed nothing on Node " + j.node + ": the run could not run (" +
                           j.could_not_run + ")");
    return result;
  }
  if (!is_dns1123_subdomain(j.node)) {
    result.ok = false;
    result.error = "the node name '" + j.node + "' is not a DNS subdomain; changed nothing";
    return result;
  }
  for (const auto& c : j.rails)
    if (!is_label_value(c.value)) {
      result.ok = false;
      result.error = "the finding '" + c.value + "' is not a label value; changed nothing";
      return result;
    }
  Undo undo;
  try {
    std::map<std::string, json> want;
    if (!j.rails.empty()) {
      const auto devices = devices_by_rail(api, j.node);
      for (const auto& c : j.rails) {
        auto it = devices.find(c.rail);
        if (it == devices.end()) {
          result.notes.push_back("rail " + std::to_string(c.rail) +
                                 ": no railyard.io device of Node " + j.node +
                                 " is published for it (not a DRA node?); the Node's label and "
                                 "reason carry it");
          continue;
        }
        for (const auto& d : it->second) want[rule_name(j.node, d)] = rule_object(j.node, d, c, o);
      }
    }
    const auto served = our_rules(api, j.node);
    if (!served && !want.empty())
      throw Refused{"GET DeviceTaintRules",
                    {404,
                     "this API server does not serve resource.k8s.io/v1beta2 DeviceTaintRules: "
                     "turn on the DRADeviceTaintRules feature gate and the API version "
                     "(README.md, \"From finding to schedule\")",
                     {}}};
    if (!served) result.notes.push_back("this API server serves no DeviceTaintRules");
    const std::map<std::string, json> have = served.value_or(std::map<std::string, json>{});
    const std::string base = kDeviceTaintRulesPath;
    for (auto& [name, rule] : want) {
      const std::string sel = rule["spec"]["deviceSelector"]["device"];
      const std::string about = "DeviceTaintRule " + name + " (" + sel + ", " +
                                std::string(rule["spec"]["taint"]["value"]) + ")";
      auto h = have.find(name);
      if (h == have.end()) {
        call(api, "POST", base, about, &rule);
        undo.created.push_back(name);
        result.actions.push_back("created " + about);
      } else if (!same_rule(h->second, rule)) {
        rule["metadata"]["resourceVersion"] = h->second["metadata"].value("resourceVersion", "");
        call(api, "PUT", base + "/" + name, about, &rule);
        undo.replaced.push_back(h->second);
        result.actions.push_back("updated " + about);
      } else {
        result.notes.push_back(about + " already in place");
      }
    }
    for (const auto& [name, rule] : have) {
      if (want.count(name)) continue;
      auto r = api.request("DELETE", base + "/" + name);
      if (!r.ok() && r.status != 404) throw Refused{"DELETE DeviceTaintRule " + name, std::move(r)};
      undo.deleted.push_back(rule);
      result.actions.push_back("deleted DeviceTaintRule " + name + " (its rail passed)");
    }
    patch_node(api, j, o, result);
  } catch (const Refused& e) {
    result.ok = false;
    result.status = e.response.status;
    result.error = e.what + ": " + e.response.message();
  } catch (const nlohmann::json::exception& e) {
    // An answer of the wrong shape where a field was read (a number for a string): the API
    // server's answer cannot be trusted, so nothing of this run stays.
    result.ok = false;
    result.error = std::string("the API server's answer has an unexpected shape: ") + e.what();
  }
  if (!result.ok) {
    const auto failures = undo.run(api);
    result.actions.clear();
    result.notes.push_back(failures.empty()
                               ? "undid what this run had changed"
                               : "could not undo everything: " + joined(failures, "; "));
  }
  return result;
}

}  // namespace railyard::validate
