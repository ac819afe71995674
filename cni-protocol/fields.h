// A network configuration's fields as both plugins read them: absent or null is "not given", any
// other wrong type or range is CniError code 7 (invalid network config) naming the key.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace railyard::cni {

std::string string_field(const nlohmann::json& j, const char* key);  // "" when not given
std::optional<int> int_field(const nlohmann::json& j, const char* key, int min, int max);
// true or false; with `on_off`, also sriov-cni's "on" and "off" (spoofchk, trust).
std::optional<bool> bool_field(const nlohmann::json& j, const char* key, bool on_off = false);

}  // namespace railyard::cni
