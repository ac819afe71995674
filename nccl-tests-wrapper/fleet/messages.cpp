#include "nccl-tests-wrapper/fleet/messages.h"

#include <arpa/inet.h>

#include <cctype>

#include "common/k8s_names.h"
#include "common/log_escape.h"

namespace railyard::validate {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& from, const std::string& what) {
  throw rdma::NetError(from + " sent " + what);
}

const json& field(const json& m, const char* key, const std::string& from) {
  if (!m.is_object() || !m.contains(key)) bad(from, std::string("a message without '") + key + "'");
  return m[key];
}

int64_t integer(const json& v, int64_t lo, int64_t hi, const char* what, const std::string& from) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi)) ||
      v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    bad(from, std::string("a ") + what + " that is not an integer from " + std::to_string(lo) +
                  " to " + std::to_string(hi));
  return v.get<int64_t>();
}

std::string short_text(const json& v, size_t max, const char* what, const std::string& from) {
  if (!v.is_string() || v.get<std::string>().size() > max)
    bad(from, std::string("a ") + what + " that is not a string of at most " + std::to_string(max) +
                  " bytes");
  return v.get<std::string>();
}

bool ipv4(const std::string& s) {
  in_addr a{};
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

std::string address(const json& v, const char* what, const std::string& from) {
  const std::string s = short_text(v, 15, what, from);
  if (!ipv4(s))
    bad(from,
        std::string("a ") + what + " that is not an IPv4 address: '" + escape_controls(s) + "'");
  return s;
}

bool mac(const std::string& m) {
  if (m.size() != 17) return false;
  for (size_t i = 0; i < m.size(); ++i)
    if (i % 3 == 2 ? m[i] != ':' : !std::isxdigit(static_cast<unsigned char>(m[i]))) return false;
  return true;
}

const json& list(const json& v, size_t exactly, const char* what, const std::string& from) {
  if (!v.is_array() || v.size() != exactly)
    bad(from, std::string("a list of ") + what + " that does not hold " + std::to_string(exactly) +
                  " (one per rail)");
  return v;
}

std::vector<rdma::Endpoint> endpoints(const json& v, size_t rails, const std::string& from) {
  std::vector<rdma::Endpoint> out;
  for (const auto& e : list(v, rails, "endpoints", from)) {
    if (!e.is_array() || e.size() != 2) bad(from, "an endpoint that is not [address, port]");
    out.push_back({address(e[0], "rail address", from),
                   static_cast<int>(integer(e[1], 1, 65535, "port", from))});
  }
  return out;
}

}  // namespace

Hello parse_hello(const json& m, int world, size_t rails, const std::string& from) {
  Hello h;
  h.rank = static_cast<int>(integer(field(m, "rank", from), 0, world - 1, "rank", from));
  if (integer(field(m, "world", from), 1, 1 << 20, "world size", from) != world)
    bad(from,
        "a world size of " + field(m, "world", from).dump() + ", not " + std::to_string(world));
  h.node = short_text(field(m, "node", from), 253, "node name", from);
  if (!is_dns1123_subdomain(h.node))
    bad(from, "a node name that is not an RFC 1123 name: '" + escape_controls(h.node) + "'");
  for (const auto& a : list(field(m, "rails", from), rails, "rail addresses", from))
    h.rails.push_back(address(a, "rail address", from));
  if (m.contains("macs") && !(m["macs"].is_array() && m["macs"].empty())) {
    for (const auto& a : list(m["macs"], rails, "MACs", from)) {
      const std::string s = short_text(a, 17, "MAC", from);
      if (!s.empty() && !mac(s)) bad(from, "a MAC that is not one: '" + escape_controls(s) + "'");
      h.macs.push_back(s);
    }
  }
  if (m.contains("firmware")) {
    const json& fw = m["firmware"];
    if (!fw.is_array() || fw.size() > 64) bad(from, "firmware that is not a list of at most 64");
    for (const auto& v : fw) h.firmware.push_back(short_text(v, 160, "firmware version", from));
  }
  return h;
}

PairOrder parse_pair(const json& m, size_t rails, const std::string& from) {
  PairOrder p;
  p.role = static_cast<int>(integer(field(m, "role", from), 0, 1, "role", from));
  p.peer = endpoints(field(m, "peer", from), rails, from);
  p.name = m.contains("name") ? short_text(m["name"], 300, "name", from) : "the partner";
  return p;
}

RingOrder parse_ring(const json& m, size_t rails, const std::string& from) {
  RingOrder r;
  const json& table = field(m, "table", from);
  if (!table.is_array() || table.size() < 2 || table.size() > 100000)
    bad(from, "a ring table that is not a list of 2 or more members");
  r.index = static_cast<int>(integer(field(m, "index", from), 0,
                                     static_cast<int64_t>(table.size()) - 1, "ring index", from));
  for (const auto& member : table) r.table.push_back(endpoints(member, rails, from));
  if (m.contains("names")) {
    for (const auto& n : list(m["names"], table.size(), "names", from))
      r.names.push_back(short_text(n, 300, "name", from));
  }
  return r;
}

ProbeOrder parse_probe(const json& m, size_t rails, const std::string& from) {
  ProbeOrder p;
  p.rail = static_cast<size_t>(
      integer(field(m, "rail", from), 0, static_cast<int64_t>(rails) - 1, "rail", from));
  const json& targets = field(m, "targets", from);
  if (!targets.is_array() || targets.size() > 4096) bad(from, "probe targets that are not a list");
  for (const auto& t : targets) p.targets.push_back(address(t, "probe target", from));
  if (m.contains("wait_ms"))
    p.wait_ms = static_cast<int>(integer(m["wait_ms"], 1, 10000, "wait", from));
  return p;
}

std::vector<int> parse_ports(const json& m, size_t rails, const std::string& from) {
  std::vector<int> out;
  for (const auto& p : list(field(m, "ports", from), rails, "ports", from))
    out.push_back(static_cast<int>(integer(p, 1, 65535, "port", from)));
  return out;
}

}  // namespace railyard::validate
