#include "deviceplugin/config.h"

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace railyard::deviceplugin {
namespace {

using nlohmann::json;

std::string where(const std::string& source) {
  return source.empty() ? "config" : source;
}

PoolKind parse_kind(const std::string& k, const std::string& ctx) {
  if (k == "bundle") return PoolKind::kBundle;
  if (k == "vf") return PoolKind::kVf;
  if (k == "pf") return PoolKind::kPf;
  throw ConfigError(ctx + ": kind must be \"bundle\", \"vf\" or \"pf\", not \"" + k + "\"");
}

template <typename T>
T get(const json& j, const std::string& key, const std::string& ctx, const char* type_name) {
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw ConfigError(ctx + ": '" + key + "' must be " + type_name);
  }
}

PoolConfig parse_pool(const json& j, const std::string& ctx) {
  if (!j.is_object()) throw ConfigError(ctx + " must be an object");
  PoolConfig p;
  std::string prefix;
  bool named = false;
  for (const auto& [key, value] : j.items()) {
    if (key == "resourceName") {
      p.name = get<std::string>(j, key, ctx, "a string");
      named = true;
    } else if (key == "kind") {
      p.kind = parse_kind(get<std::string>(j, key, ctx, "a string"), ctx);
    } else if (key == "perRail") {
      p.per_rail = get<bool>(j, key, ctx, "true or false");
    } else if (key == "nicFunction") {
      const auto f = get<std::string>(j, key, ctx, "a string");
      if (f != "pf" && f != "vf") throw ConfigError(ctx + ": nicFunction must be \"pf\" or \"vf\"");
      p.bundle_vf = f == "vf";
    } else if (key == "vfIndex") {
      p.bundle_vf_index = get<int>(j, key, ctx, "a number");
      if (p.bundle_vf_index < 0) throw ConfigError(ctx + ": vfIndex must be >= 0");
    } else if (key == "ncclIbHca") {
      p.nccl_ib_hca = get<bool>(j, key, ctx, "true or false");
    } else if (key == "selectors") {
      // sriov-network-device-plugin also takes a one-element list of selector objects.
      const json* s = &value;
      if (value.is_array()) {
        if (value.size() != 1)
          throw ConfigError(ctx + ": selectors as a list must hold exactly one object");
        s = &value[0];
      }
      try {
        p.selectors = topology::Selectors::from_json(*s);
      } catch (const topology::SelectorError& e) {
        throw ConfigError(ctx + ": " + e.what());
      }
    } else if (key == "resourcePrefix") {
      // sriov-dp's per-pool prefix: wins over the top-level one for this pool.
      prefix = get<std::string>(j, key, ctx, "a string");
    } else if (key == "deviceType") {
      if (value != "netDevice")
        throw ConfigError(ctx + ": deviceType " + value.dump() + " is not served (netDevice only)");
    } else {
      throw ConfigError(ctx + ": unknown field '" + key + "'");
    }
  }
  if (!named || p.name.empty()) throw ConfigError(ctx + ": resourceName is required");
  if (!prefix.empty()) p.name = prefix + "/" + p.name;
  if ((p.bundle_vf || p.bundle_vf_index != 0) && p.kind != PoolKind::kBundle)
    throw ConfigError(ctx + ": nicFunction and vfIndex apply to kind \"bundle\" only");
  return p;
}

std::vector<PoolConfig> default_pools() {
  return {{.name = "bundle", .kind = PoolKind::kBundle},
          {.name = "rail", .kind = PoolKind::kVf, .per_rail = true}};
}

// Full resource names, checked; one pool per name.
void finish(Config& c) {
  const std::string ctx = where(c.source);
  for (auto& p : c.pools) {
    if (p.name.find('/') == std::string::npos) p.name = c.resource_prefix + "/" + p.name;
    // perRail pools get a rail index appended: check the name with one.
    const std::string check = p.per_rail ? p.name + "0" : p.name;
    if (!valid_resource_name(check))
      throw ConfigError(ctx + ": '" + p.name + "' is not a valid extended resource name");
  }
  for (size_t a = 0; a < c.pools.size(); ++a)
    for (size_t b = a + 1; b < c.pools.size(); ++b)
      if (c.pools[a].name == c.pools[b].name)
        throw ConfigError(ctx + ": resource '" + c.pools[a].name + "' is listed twice");
}

}  // namespace

Config Config::defaults() {
  Config c;
  c.pools = default_pools();
  finish(c);
  return c;
}

Config Config::parse(const std::string& text, const std::string& source) {
  const std::string ctx = where(source);
  json j;
  try {
    j = json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    throw ConfigError(ctx + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw ConfigError(ctx + ": must be a JSON object");
  Config c;
  c.pools = default_pools();
  c.source = source;
  bool have_list = false;
  for (const auto& [key, value] : j.items()) {
    if (key == "resourcePrefix") {
      c.resource_prefix = get<std::string>(j, key, ctx, "a string");
    } else if (key == "healthPollMs") {
      c.health_poll_ms = get<int>(j, key, ctx, "a number");
      if (c.health_poll_ms < 10 || c.health_poll_ms > 60000)
        throw ConfigError(ctx + ": healthPollMs must be between 10 and 60000");
    } else if (key == "gpuDevices") {
      const auto g = get<std::string>(j, key, ctx, "a string");
      if (g == "nodes")
        c.gpu_devices = GpuDevices::kNodes;
      else if (g == "cdi")
        c.gpu_devices = GpuDevices::kCdi;
      else if (g == "env")
        c.gpu_devices = GpuDevices::kEnv;
      else
        throw ConfigError(ctx + ": gpuDevices must be \"nodes\", \"cdi\" or \"env\"");
    } else if (key == "cdiKind") {
      c.cdi_kind = get<std::string>(j, key, ctx, "a string");
    } else if (key == "resourceList") {
      if (!value.is_array()) throw ConfigError(ctx + ": resourceList must be a list");
      have_list = true;
      c.pools.clear();
      for (size_t i = 0; i < value.size(); ++i) {
        const std::string pctx = ctx + ": resourceList[" + std::to_string(i) + "]";
        c.pools.push_back(parse_pool(value[i], pctx));
      }
    } else {
      throw ConfigError(ctx + ": unknown field '" + key + "'");
    }
  }
  if (have_list && c.pools.empty()) throw ConfigError(ctx + ": resourceList is empty");
  finish(c);
  return c;
}

Config Config::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file.string() + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), file.string());
}

bool valid_resource_name(const std::string& full) {
  const auto slash = full.find('/');
  if (slash == std::string::npos || full.find('/', slash + 1) != std::string::npos) return false;
  const std::string domain = full.substr(0, slash), name = full.substr(slash + 1);
  static const std::regex dns_subdomain(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  static const std::regex qualified_name("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
  if (domain.size() > 253 || !std::regex_match(domain, dns_subdomain)) return false;
  if (domain == "kubernetes.io" || domain.ends_with(".kubernetes.io")) return false;
  return name.size() <= 63 && std::regex_match(name, qualified_name);
}

std::string pcidevice_env_name(const std::string& full) {
  std::string out = "PCIDEVICE_";
  for (unsigned char ch : full) out += std::isalnum(ch) ? static_cast<char>(std::toupper(ch)) : '_';
  return out;
}

}  // namespace railyard::deviceplugin
