// Kubernetes' name rules (RFC 1123), for every name that crosses a boundary into a path, an API
// request, a label or a printed kubectl command: a claim's namespace and name from the kubelet, a
// node name a peer claims. A name that fails them is refused, never cleaned up and used.
#pragma once

#include <string_view>

namespace railyard {

// A DNS label: 1-63 of [a-z0-9-], starting and ending with a letter or digit (namespaces).
bool is_dns1123_label(std::string_view s);
// A DNS subdomain: 1-253 characters, dot-separated labels (node names, most object names).
bool is_dns1123_subdomain(std::string_view s);
// An object UID as the API server makes them (a UUID), or any 1-64 of [A-Za-z0-9-]: safe as a
// file name.
bool is_uid(std::string_view s);
// A label value (also a taint's value): empty, or 1-63 of [A-Za-z0-9._-] starting and ending
// with a letter or digit.
bool is_label_value(std::string_view s);
// A label or taint key: [DNS subdomain "/"] then 1-63 of [A-Za-z0-9._-], starting and ending with
// a letter or digit.
bool is_label_key(std::string_view s);

}  // namespace railyard
