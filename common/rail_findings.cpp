#include "common/rail_findings.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace railyard {

using json = nlohmann::json;

namespace {

constexpr int kMaxRail = 1023;
constexpr size_t kMaxReason = 300;

std::string string_field(const json& j, const char* name) {
  if (!j.contains(name)) return "";
  if (!j[name].is_string())
    throw std::runtime_error(std::string("\"") + name + "\" is not a string");
  return j[name].get<std::string>();
}

}  // namespace

std::string rail_findings_json(const RailFindings& f) {
  json rails = json::array();
  for (const auto& [rail, reason] : f.failed) rails.push_back({{"rail", rail}, {"reason", reason}});
  return json{{"node", f.node},
              {"validatedAt", f.validated_at},
              {"verdict", f.verdict},
              {"failedRails", rails}}
             .dump(2) +
         "\n";
}

RailFindings parse_rail_findings(const std::string& text) {
  if (text.size() > kMaxRailFindingsBytes)
    throw std::runtime_error("larger than " + std::to_string(kMaxRailFindingsBytes) + " bytes");
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) throw std::runtime_error("not a JSON object");
  RailFindings f;
  f.node = string_field(j, "node");
  f.validated_at = string_field(j, "validatedAt");
  f.verdict = string_field(j, "verdict");
  if (!j.contains("failedRails")) return f;
  if (!j["failedRails"].is_array()) throw std::runtime_error("\"failedRails\" is not a list");
  for (const auto& r : j["failedRails"]) {
    if (!r.is_object() || !r.contains("rail") || !r["rail"].is_number_integer())
      throw std::runtime_error("a failedRails entry has no integer \"rail\"");
    const int rail = r["rail"].get<int>();
    if (rail < 0 || rail > kMaxRail)
      throw std::runtime_error("rail " + std::to_string(rail) + " is out of range");
    std::string reason = string_field(r, "reason");
    if (reason.size() > kMaxReason) reason = reason.substr(0, kMaxReason - 3) + "...";
    f.failed[rail] = reason.empty() ? "failed validation" : reason;
  }
  return f;
}

}  // namespace railyard
