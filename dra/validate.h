// What the API server would reject in a ResourceSlice (resource.k8s.io/v1 validation), checked
// here so that the unit tests, and the publisher before it sends, find it first.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace railyard::dra {

// RFC 1123 label: at most 63 of [a-z0-9-], alphanumeric at both ends (a device name).
bool is_dns_label(std::string_view s);
// RFC 1123 subdomain: dot-separated labels, at most 253 characters (driver, object names).
bool is_dns_subdomain(std::string_view s);
// An attribute or capacity name: "<DNS subdomain of at most 63>/<C identifier of at most 32>",
// or the identifier alone (then the driver's domain is implied).
bool is_qualified_name(std::string_view s);

// One message per problem, naming the device and field; empty when the slice is valid.
std::vector<std::string> validate_slice(const nlohmann::json& slice);

}  // namespace railyard::dra
