#include "cni-protocol/result.h"

#include "cni-protocol/error.h"
#include "cni-protocol/version.h"

namespace railyard::cni {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) {
  throw CniError(kDecodeFailure, "prevResult: " + what);
}

std::string str(const json& obj, const char* key, const std::string& where, bool required) {
  if (!obj.contains(key)) {
    if (required) bad(where + "." + key + " is missing");
    return "";
  }
  if (!obj[key].is_string()) bad(where + "." + key + " must be a string");
  return obj[key].get<std::string>();
}

std::optional<int> num(const json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
  if (!obj[key].is_number_integer()) bad(where + "." + key + " must be an integer");
  return obj[key].get<int>();
}

}  // namespace

Result parse_result(const json& j) {
  if (!j.is_object()) bad("must be an object");
  Result r;
  if (j.contains("interfaces")) {
    if (!j["interfaces"].is_array()) bad("interfaces must be a list");
    for (size_t i = 0; i < j["interfaces"].size(); ++i) {
      const json& o = j["interfaces"][i];
      const std::string where = "interfaces[" + std::to_string(i) + "]";
      if (!o.is_object()) bad(where + " must be an object");
      Interface itf;
      itf.name = str(o, "name", where, true);
      itf.mac = str(o, "mac", where, false);
      itf.sandbox = str(o, "sandbox", where, false);
      itf.mtu = num(o, "mtu", where);
      itf.socket_path = str(o, "socketPath", where, false);
      itf.pci_id = str(o, "pciID", where, false);
      r.interfaces.push_back(std::move(itf));
    }
  }
  if (j.contains("ips")) {
    if (!j["ips"].is_array()) bad("ips must be a list");
    for (size_t i = 0; i < j["ips"].size(); ++i) {
      const json& o = j["ips"][i];
      const std::string where = "ips[" + std::to_string(i) + "]";
      if (!o.is_object()) bad(where + " must be an object");
      IpConfig ip;
      auto addr = net::IpPrefix::parse(str(o, "address", where, true));
      if (!addr)
        bad(where + ".address '" + o["address"].get<std::string>() +
            "' is not an address with a prefix length");
      ip.address = *addr;
      if (o.contains("gateway") && !o["gateway"].is_null()) {
        auto gw = net::IpAddress::parse(str(o, "gateway", where, true));
        if (!gw || gw->family != addr->address.family)
          bad(where + ".gateway is not an address of the same family");
        ip.gateway = *gw;
      }
      ip.interface = num(o, "interface", where);
      if (ip.interface &&
          (*ip.interface < 0 || *ip.interface >= static_cast<int>(r.interfaces.size())))
        bad(where + ".interface " + std::to_string(*ip.interface) +
            " is not an index into interfaces");
      r.ips.push_back(std::move(ip));
    }
  }
  if (j.contains("routes")) {
    if (!j["routes"].is_array()) bad("routes must be a list");
    for (size_t i = 0; i < j["routes"].size(); ++i) {
      const json& o = j["routes"][i];
      const std::string where = "routes[" + std::to_string(i) + "]";
      if (!o.is_object()) bad(where + " must be an object");
      Route rt;
      auto dst = net::IpPrefix::parse(str(o, "dst", where, true));
      if (!dst) bad(where + ".dst is not a prefix");
      rt.dst = dst->network();
      if (o.contains("gw") && !o["gw"].is_null()) {
        auto gw = net::IpAddress::parse(str(o, "gw", where, true));
        if (!gw || gw->family != dst->address.family)
          bad(where + ".gw is not an address of the same family");
        rt.gw = *gw;
      }
      rt.mtu = num(o, "mtu", where);
      rt.advmss = num(o, "advmss", where);
      rt.priority = num(o, "priority", where);
      rt.table = num(o, "table", where);
      rt.scope = num(o, "scope", where);
      r.routes.push_back(std::move(rt));
    }
  }
  if (j.contains("dns")) {
    if (!j["dns"].is_object()) bad("dns must be an object");
    r.dns = j["dns"];
  }
  return r;
}

json to_json(const Result& r, const std::string& version) {
  const bool v11 = at_least(version, "1.1.0");
  const bool legacy = !at_least(version, "1.0.0");
  json out = {{"cniVersion", version}};
  json interfaces = json::array();
  for (const auto& i : r.interfaces) {
    json o = {{"name", i.name}};
    if (!i.mac.empty()) o["mac"] = i.mac;
    if (!i.sandbox.empty()) o["sandbox"] = i.sandbox;
    if (v11 && i.mtu) o["mtu"] = *i.mtu;
    if (v11 && !i.socket_path.empty()) o["socketPath"] = i.socket_path;
    if (v11 && !i.pci_id.empty()) o["pciID"] = i.pci_id;
    interfaces.push_back(std::move(o));
  }
  if (!interfaces.empty()) out["interfaces"] = interfaces;
  json ips = json::array();
  for (const auto& ip : r.ips) {
    json o = {{"address", ip.address.to_string()}};
    if (legacy) o["version"] = ip.address.address.is_v4() ? "4" : "6";
    if (ip.gateway) o["gateway"] = ip.gateway->to_string();
    if (ip.interface) o["interface"] = *ip.interface;
    ips.push_back(std::move(o));
  }
  if (!ips.empty()) out["ips"] = ips;
  json routes = json::array();
  for (const auto& rt : r.routes) {
    json o = {{"dst", rt.dst.to_string()}};
    if (rt.gw) o["gw"] = rt.gw->to_string();
    if (v11) {
      if (rt.mtu) o["mtu"] = *rt.mtu;
      if (rt.advmss) o["advmss"] = *rt.advmss;
      if (rt.priority) o["priority"] = *rt.priority;
      if (rt.table) o["table"] = *rt.table;
      if (rt.scope) o["scope"] = *rt.scope;
    }
    routes.push_back(std::move(o));
  }
  if (!routes.empty()) out["routes"] = routes;
  out["dns"] = r.dns;
  return out;
}

}  // namespace railyard::cni
