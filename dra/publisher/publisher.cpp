#include "dra/publisher/publisher.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/k8s_names.h"
#include "dra/slices/slices.h"

namespace railyard::dra {

using json = nlohmann::json;

std::string pool_list_path(const std::string& node) {
  return std::string(kSlicesPath) + "?fieldSelector=" +
         kube::url_escape("spec.nodeName=" + node + ",spec.driver=" + kDriverName);
}

json with_owner(json slice, const std::string& node, const std::string& uid) {
  // No blockOwnerDeletion: that needs update on nodes/finalizers, which the driver does not get.
  slice["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                                       {"kind", "Node"},
                                                       {"name", node},
                                                       {"uid", uid},
                                                       {"controller", true}}});
  return slice;
}

std::vector<json> Publisher::list_pool() {
  auto list = api_.call("GET", pool_list_path(node_));
  std::vector<json> out;
  for (auto& item : list.value("items", json::array())) {
    // The field selector already says so; checked again so that a server ignoring it cannot
    // make us delete another pool's slices.
    if (item["spec"].value("nodeName", "") != node_ ||
        item["spec"].value("driver", "") != kDriverName)
      continue;
    out.push_back(std::move(item));
  }
  return out;
}

std::string Publisher::read_node_uid() {
  const auto n = api_.call("GET", "/api/v1/nodes/" + kube::url_escape(node_));
  std::string uid;
  if (n.is_object() && n.contains("metadata") && n["metadata"].is_object() &&
      n["metadata"].contains("uid") && n["metadata"]["uid"].is_string())
    uid = n["metadata"]["uid"].get<std::string>();
  if (!is_uid(uid))
    throw std::runtime_error("Node " + node_ + " has no uid the API server could give");
  return uid;
}

void Publisher::connect() {
  node_uid_ = read_node_uid();
  for (const auto& s : list_pool())
    generation_ = std::max<int64_t>(generation_, s["spec"]["pool"].value("generation", 0));
}

namespace {

// Devices `sent` with taints that come back without them: an API server whose DRADeviceTaints
// gate is off drops the field without an error.
size_t count_dropped_taints(const json& sent, const kube::ApiResponse& r) {
  auto devices = [](const json& slice) {
    const json spec = slice.is_object() ? slice.value("spec", json::object()) : json::object();
    const json d = spec.is_object() ? spec.value("devices", json::array()) : json::array();
    return d.is_array() ? d : json::array();
  };
  auto name = [](const json& d) {
    return d.contains("name") && d["name"].is_string() ? d["name"].get<std::string>() : "";
  };
  std::set<std::string> untainted;
  for (const auto& d : devices(r.json()))
    if (d.is_object() && !d.contains("taints")) untainted.insert(name(d));
  size_t n = 0;
  for (const auto& d : devices(sent))
    if (d.contains("taints") && untainted.count(name(d))) ++n;
  return n;
}

}  // namespace

void Publisher::publish(const std::vector<json>& slices) {
  taints_dropped_ = 0;
  std::map<std::string, std::string> existing;  // name -> resourceVersion
  for (const auto& s : list_pool())
    existing[s["metadata"].value("name", "")] = s["metadata"].value("resourceVersion", "");
  std::set<std::string> wanted;
  for (const auto& slice : slices) {
    json body = with_owner(slice, node_, node_uid_);
    const std::string name = body["metadata"].value("name", "");
    wanted.insert(name);
    const std::string path = std::string(kSlicesPath) + "/" + name;
    if (auto it = existing.find(name); it != existing.end()) {
      body["metadata"]["resourceVersion"] = it->second;
      auto r = api_.request("PUT", path, &body);
      if (r.status == 409) {  // changed under us (or deleted and made again): read it again
        auto now = api_.call("GET", path);
        body["metadata"]["resourceVersion"] = now["metadata"].value("resourceVersion", "");
        r = api_.request("PUT", path, &body);
      } else if (r.status == 404) {  // deleted since the list
        body["metadata"].erase("resourceVersion");
        r = api_.request("POST", kSlicesPath, &body);
      }
      if (!r.ok()) throw kube::ApiError("PUT", path, r);
      taints_dropped_ += count_dropped_taints(body, r);
    } else {
      auto r = api_.request("POST", kSlicesPath, &body);
      if (r.status == 409) {  // made since the list: replace it
        auto now = api_.call("GET", path);
        body["metadata"]["resourceVersion"] = now["metadata"].value("resourceVersion", "");
        r = api_.request("PUT", path, &body);
        if (!r.ok()) throw kube::ApiError("PUT", path, r);
      } else if (!r.ok()) {
        throw kube::ApiError("POST", kSlicesPath, r);
      }
      taints_dropped_ += count_dropped_taints(body, r);
    }
  }
  for (const auto& [name, rv] : existing) {
    if (wanted.count(name)) continue;
    const std::string path = std::string(kSlicesPath) + "/" + name;
    auto r = api_.request("DELETE", path);
    if (!r.ok() && r.status != 404) throw kube::ApiError("DELETE", path, r);
  }
  for (const auto& s : slices)
    generation_ = std::max<int64_t>(generation_, s["spec"]["pool"].value("generation", 0));
  sent_ = slices;
}

bool Publisher::in_sync() {
  if (const std::string uid = read_node_uid(); uid != node_uid_) {
    node_uid_ = uid;
    return false;
  }
  std::map<std::string, json> now;
  for (auto& s : list_pool()) {
    const std::string name = s["metadata"].value("name", "");
    now[name] = std::move(s);
  }
  if (now.size() != sent_.size()) return false;
  for (const auto& want : sent_) {
    auto it = now.find(want["metadata"].value("name", ""));
    if (it == now.end() || it->second["spec"]["pool"] != want["spec"]["pool"] ||
        it->second["spec"].value("devices", json::array()) !=
            want["spec"].value("devices", json::array()))
      return false;
  }
  return true;
}

size_t Publisher::remove_all() {
  size_t n = 0;
  for (const auto& s : list_pool()) {
    const std::string path = std::string(kSlicesPath) + "/" + s["metadata"].value("name", "");
    auto r = api_.request("DELETE", path);
    if (!r.ok() && r.status != 404) throw kube::ApiError("DELETE", path, r);
    ++n;
  }
  return n;
}

}  // namespace railyard::dra
