#include "dra/slices/validate.h"

#include <algorithm>
#include <regex>
#include <set>

#include "common/k8s_names.h"
#include "dra/slices/slices.h"

namespace railyard::dra {
namespace {

using nlohmann::json;

bool is_c_identifier(std::string_view s) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
  return !s.empty() && std::regex_match(s.begin(), s.end(), re);
}

// resource.k8s.io/v1: DeviceAttribute holds exactly one of these; strings and versions are at
// most 64 characters.
void check_attribute(const std::string& where, const json& v, std::vector<std::string>& out) {
  static const std::set<std::string> kTypes = {"int", "bool", "string", "version"};
  if (!v.is_object() || v.size() != 1 || !kTypes.count(v.begin().key())) {
    out.push_back(where + ": must have exactly one of int, bool, string, version");
    return;
  }
  const std::string type = v.begin().key();
  const json& value = v.begin().value();
  const bool ok = type == "int"    ? value.is_number_integer()
                  : type == "bool" ? value.is_boolean()
                                   : value.is_string() && value.get<std::string>().size() <= 64;
  if (!ok) out.push_back(where + ": bad " + type + " value " + value.dump());
}

void check_capacity(const std::string& where, const json& v, std::vector<std::string>& out) {
  static const std::regex quantity("[0-9]+(\\.[0-9]+)?([kMGTPE]|[KMGTPE]i)?");
  const std::string q = v.is_object() && v.contains("value") && v["value"].is_string()
                            ? v["value"].get<std::string>()
                            : "";
  if (!std::regex_match(q, quantity)) out.push_back(where + ": bad quantity " + v.dump());
}

void check_device(const json& d, std::set<std::string>& names, std::vector<std::string>& out) {
  const std::string name = d.value("name", "");
  if (!is_dns1123_label(name)) out.push_back("device name \"" + name + "\" is not a DNS label");
  if (!names.insert(name).second) out.push_back("device name \"" + name + "\" appears twice");
  const json attrs = d.value("attributes", json::object());
  const json cap = d.value("capacity", json::object());
  if (attrs.size() + cap.size() > kMaxAttributesPerDevice)
    out.push_back(name + ": " + std::to_string(attrs.size() + cap.size()) +
                  " attributes and capacities, more than " +
                  std::to_string(kMaxAttributesPerDevice));
  for (const auto& [key, v] : attrs.items()) {
    if (!is_qualified_name(key)) out.push_back(name + ": bad attribute name " + key);
    check_attribute(name + "/" + key, v, out);
  }
  for (const auto& [key, v] : cap.items()) {
    if (!is_qualified_name(key)) out.push_back(name + ": bad capacity name " + key);
    check_capacity(name + "/" + key, v, out);
  }
  const json taints = d.value("taints", json::array());
  if (taints.size() > kMaxTaintsPerDevice)
    out.push_back(name + ": " + std::to_string(taints.size()) + " taints, more than " +
                  std::to_string(kMaxTaintsPerDevice));
  for (const auto& t : taints) {
    if (!t.is_object()) {
      out.push_back(name + ": a taint that is not an object");
      continue;
    }
    if (!is_label_key(t.value("key", ""))) out.push_back(name + ": bad taint key " + t.dump());
    if (!is_label_value(t.value("value", "")))
      out.push_back(name + ": bad taint value " + t.dump());
    const std::string effect = t.value("effect", "");
    if (effect != "NoSchedule" && effect != "NoExecute" && effect != "None")
      out.push_back(name + ": bad taint effect " + t.dump());
  }
}

}  // namespace

bool is_qualified_name(std::string_view s) {
  const size_t slash = s.find('/');
  const auto id = slash == std::string_view::npos ? s : s.substr(slash + 1);
  if (id.size() > 32 || !is_c_identifier(id)) return false;
  if (slash == std::string_view::npos) return true;
  const auto domain = s.substr(0, slash);
  return domain.size() <= 63 && is_dns1123_subdomain(domain);
}

std::vector<std::string> validate_slice(const json& slice) {
  std::vector<std::string> out;
  if (slice.value("apiVersion", "") != "resource.k8s.io/v1" ||
      slice.value("kind", "") != "ResourceSlice")
    out.push_back("not a resource.k8s.io/v1 ResourceSlice");
  const json spec = slice.value("spec", json::object());
  if (!is_dns1123_subdomain(spec.value("driver", "")))
    out.push_back("spec.driver is not a DNS subdomain");
  const json pool = spec.value("pool", json::object());
  if (pool.value("name", "").empty()) out.push_back("spec.pool.name is empty");
  if (pool.value("resourceSliceCount", 0) < 1) out.push_back("spec.pool.resourceSliceCount < 1");
  const json devices = spec.value("devices", json::array());
  const bool tainted = std::any_of(devices.begin(), devices.end(), [](const json& d) {
    return d.is_object() && d.contains("taints");
  });
  const size_t most = tainted ? kMaxTaintedDevicesPerSlice : kMaxDevicesPerSlice;
  if (devices.size() > most)
    out.push_back(std::to_string(devices.size()) + " devices, more than " + std::to_string(most) +
                  (tainted ? " (a slice with taints)" : ""));
  std::set<std::string> names;
  for (const auto& d : devices) check_device(d, names, out);
  return out;
}

}  // namespace railyard::dra
