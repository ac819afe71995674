#include "common/k8s_names.h"

namespace railyard {
namespace {

bool alnum_lower(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool alnum(char c) {
  return alnum_lower(c) || (c >= 'A' && c <= 'Z');
}

// The name part of a label key, and a non-empty label value.
bool is_label_name(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

}  // namespace

bool is_label_value(std::string_view s) {
  return s.empty() || is_label_name(s);
}

bool is_label_key(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return is_label_name(s);
  return is_dns1123_subdomain(s.substr(0, slash)) && is_label_name(s.substr(slash + 1));
}

bool is_dns1123_label(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum_lower(s.front()) || !alnum_lower(s.back())) return false;
  for (char c : s)
    if (!alnum_lower(c) && c != '-') return false;
  return true;
}

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  for (;;) {
    const size_t dot = s.find('.', start);
    const std::string_view label =
        s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!is_dns1123_label(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_uid(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'))
      return false;
  return true;
}

}  // namespace railyard
