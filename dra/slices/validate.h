// What the API server would reject in a ResourceSlice (resource.k8s.io/v1 validation), checked
// here so that the unit tests, and the publisher before it sends, find it first.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace railyard::dra {

// Device, driver and object names are RFC 1123 labels and subdomains: common/k8s_names.h.
// An attribute or capacity name: "<DNS subdomain of at most 63>/<C identifier of at most 32>",
// or the identifier alone (then the driver's domain is implied).
bool is_qualified_name(std::string_view s);

// One message per problem, naming the device and field; empty when the slice is valid.
std::vector<std::string> validate_slice(const nlohmann::json& slice);

}  // namespace railyard::dra
