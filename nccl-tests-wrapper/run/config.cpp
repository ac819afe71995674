#include "nccl-tests-wrapper/run/config.h"

#include <fstream>

#include "topology/model/path.h"

namespace railyard::validate {
namespace {

using nlohmann::json;

void known(const json& obj, const std::string& where, std::initializer_list<const char*> keys) {
  for (const auto& [k, v] : obj.items()) {
    bool ok = false;
    for (const char* key : keys) ok |= k == key;
    if (!ok) throw ConfigError(where + ": unknown field '" + k + "'");
  }
}

template <class T>
std::optional<T> get(const json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
  try {
    return obj[key].get<T>();
  } catch (const json::exception&) {
    throw ConfigError(where + "." + key + " has the wrong type");
  }
}

}  // namespace

Config Config::parse(const json& j) {
  if (!j.is_object()) throw ConfigError("the config must be a JSON object");
  known(j, "config", {"sysfsRoot", "railsFile", "checks", "benchmark"});
  Config c;
  c.sysfs_root = get<std::string>(j, "sysfsRoot", "config").value_or("");
  c.rails_file = get<std::string>(j, "railsFile", "config").value_or("");
  const json checks = j.value("checks", json::object());
  if (!checks.is_object()) throw ConfigError("checks must be an object");
  known(checks, "checks",
        {"portActive", "expectedRateGbps", "pcieNotDegraded", "minMtu", "roceGid", "maxPathClass",
         "gpuDirect", "fabricMtu", "roceQos", "pcieAcs", "portErrors", "linkFlaps", "ncclPath",
         "timelineHz", "firmware"});
  c.checks.port_active = get<bool>(checks, "portActive", "checks").value_or(true);
  c.checks.expected_rate_gbps = get<double>(checks, "expectedRateGbps", "checks");
  c.checks.pcie_not_degraded = get<bool>(checks, "pcieNotDegraded", "checks").value_or(true);
  c.checks.min_mtu = get<int>(checks, "minMtu", "checks");
  c.checks.roce_gid = get<bool>(checks, "roceGid", "checks").value_or(true);
  c.checks.max_path_class = get<std::string>(checks, "maxPathClass", "checks").value_or("PXB");
  if (!topology::parse_path_class(c.checks.max_path_class))
    throw ConfigError("checks.maxPathClass '" + c.checks.max_path_class +
                      "' is not PIX, PXB, PHB, NODE or SYS");
  c.checks.gpu_direct = get<std::string>(checks, "gpuDirect", "checks").value_or("warn");
  if (c.checks.gpu_direct != "off" && c.checks.gpu_direct != "warn" &&
      c.checks.gpu_direct != "require")
    throw ConfigError("checks.gpuDirect must be off, warn or require");
  auto& ck = c.checks;
  ck.fabric_mtu = get<int>(checks, "fabricMtu", "checks").value_or(4096);
  if (ck.fabric_mtu != 0 && ck.fabric_mtu != 256 && ck.fabric_mtu != 512 && ck.fabric_mtu != 1024 &&
      ck.fabric_mtu != 2048 && ck.fabric_mtu != 4096)
    throw ConfigError("checks.fabricMtu must be an IB MTU (256, 512, 1024, 2048, 4096) or 0");
  // A check is on by default; false turns it off, an object configures it.
  auto section = [&](const char* key, std::initializer_list<const char*> fields, bool& on) {
    const std::string where = std::string("checks.") + key;
    if (!checks.contains(key)) return json::object();
    const json& v = checks[key];
    if (v.is_boolean()) {
      on = v.get<bool>();
      return json::object();
    }
    if (!v.is_object()) throw ConfigError(where + " must be true, false or an object");
    known(v, where, fields);
    return v;
  };
  const json qos = section("roceQos", {"priority", "ecn"}, ck.roce_qos);
  ck.roce_priority = get<int>(qos, "priority", "checks.roceQos").value_or(3);
  if (ck.roce_priority < 0 || ck.roce_priority > 7)
    throw ConfigError("checks.roceQos.priority must be from 0 to 7");
  ck.require_ecn = get<bool>(qos, "ecn", "checks.roceQos").value_or(true);
  ck.pcie_acs = get<bool>(checks, "pcieAcs", "checks").value_or(true);
  const json pe = section("portErrors", {"thresholds"}, ck.port_errors);
  ck.counter_thresholds =
      get<std::map<std::string, uint64_t>>(pe, "thresholds", "checks.portErrors")
          .value_or(std::map<std::string, uint64_t>{});
  const json lf = section("linkFlaps", {"max"}, ck.link_flaps);
  ck.max_link_flaps = get<int>(lf, "max", "checks.linkFlaps").value_or(0);
  const json fw = section("firmware", {"version"}, ck.firmware);
  ck.firmware_version = get<std::string>(fw, "version", "checks.firmware");
  if (ck.firmware_version && (ck.firmware_version->empty() || ck.firmware_version->size() > 64))
    throw ConfigError("checks.firmware.version must be a version of 1 to 64 characters");
  ck.nccl_path = get<bool>(checks, "ncclPath", "checks").value_or(true);
  ck.timeline_hz = get<double>(checks, "timelineHz", "checks").value_or(10);
  if (ck.timeline_hz < 0 || ck.timeline_hz > 1000)
    throw ConfigError("checks.timelineHz must be from 0 to 1000");
  const json b = j.value("benchmark", json::object());
  if (!b.is_object()) throw ConfigError("benchmark must be an object");
  known(b, "benchmark",
        {"command", "args", "perRail", "allRails", "largeMessageBytes", "minBusbwGbps",
         "minFractionOfLineRate", "minFractionOfMedianRail", "allRailsMinBusbwGbps",
         "allRailsScale", "allRailsMinFraction", "repeats", "timeoutSeconds", "env"});
  auto& bm = c.benchmark;
  bm.command = get<std::string>(b, "command", "benchmark").value_or("");
  bm.args =
      get<std::vector<std::string>>(b, "args", "benchmark").value_or(std::vector<std::string>{});
  bm.per_rail = get<bool>(b, "perRail", "benchmark").value_or(true);
  bm.all_rails = get<bool>(b, "allRails", "benchmark").value_or(true);
  bm.large_message_bytes = get<int64_t>(b, "largeMessageBytes", "benchmark").value_or(256LL << 20);
  bm.min_busbw_gbps = get<double>(b, "minBusbwGbps", "benchmark");
  bm.min_fraction_of_line_rate = get<double>(b, "minFractionOfLineRate", "benchmark");
  bm.min_fraction_of_median_rail =
      get<double>(b, "minFractionOfMedianRail", "benchmark").value_or(0.9);
  bm.all_rails_min_busbw_gbps = get<double>(b, "allRailsMinBusbwGbps", "benchmark");
  bm.all_rails_scale = get<std::string>(b, "allRailsScale", "benchmark").value_or("rails");
  if (bm.all_rails_scale != "rails" && bm.all_rails_scale != "one")
    throw ConfigError("benchmark.allRailsScale must be rails or one");
  bm.all_rails_min_fraction = get<double>(b, "allRailsMinFraction", "benchmark").value_or(0.75);
  if (bm.all_rails_min_fraction < 0 || bm.all_rails_min_fraction > 1)
    throw ConfigError("benchmark.allRailsMinFraction must be from 0 to 1");
  bm.repeats = get<int>(b, "repeats", "benchmark").value_or(2);
  if (bm.repeats < 1) throw ConfigError("benchmark.repeats must be at least 1");
  bm.timeout_seconds = get<int>(b, "timeoutSeconds", "benchmark").value_or(600);
  bm.env = get<std::map<std::string, std::string>>(b, "env", "benchmark")
               .value_or(std::map<std::string, std::string>{});
  return c;
}

Config Config::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot read the config");
  json j = json::parse(in, nullptr, false, true);
  if (j.is_discarded()) throw ConfigError(path + ": not valid JSON");
  try {
    return parse(j);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

}  // namespace railyard::validate
