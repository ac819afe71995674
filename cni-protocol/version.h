// CNI spec versions: which we speak, and comparing them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace railyard::cni {

inline constexpr const char* kLatestVersion = "1.1.0";

const std::vector<std::string>& supported_versions();
bool is_supported_version(const std::string& v);
// -1, 0, 1; nullopt when either is not "X.Y.Z".
std::optional<int> compare_versions(const std::string& a, const std::string& b);
// True for 1.0.0 and later: results without ips[].version, CHECK/DEL receive prevResult...
bool at_least(const std::string& v, const std::string& min);

}  // namespace railyard::cni
