#include "cni-protocol/fields.h"

#include "cni-protocol/error.h"

namespace railyard::cni {
namespace {

bool given(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && !j[key].is_null();
}

[[noreturn]] void bad(const char* key, const std::string& must) {
  throw CniError(kInvalidConfig, std::string("'") + key + "' must be " + must);
}

}  // namespace

std::string string_field(const nlohmann::json& j, const char* key) {
  if (!given(j, key)) return "";
  if (!j[key].is_string()) bad(key, "a string");
  return j[key].get<std::string>();
}

std::optional<int> int_field(const nlohmann::json& j, const char* key, int min, int max) {
  if (!given(j, key)) return std::nullopt;
  const auto& v = j[key];
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(max)) ||
      v.get<int64_t>() < min || v.get<int64_t>() > max)
    bad(key, "an integer from " + std::to_string(min) + " to " + std::to_string(max));
  return v.get<int>();
}

std::optional<bool> bool_field(const nlohmann::json& j, const char* key, bool on_off) {
  if (!given(j, key)) return std::nullopt;
  if (j[key].is_boolean()) return j[key].get<bool>();
  if (on_off && j[key].is_string() && (j[key] == "on" || j[key] == "off")) return j[key] == "on";
  bad(key, on_off ? "true/false or \"on\"/\"off\"" : "true or false");
}

}  // namespace railyard::cni
