// The CNI result (interfaces, ips, routes, dns), read and written for every version we speak:
// 0.3.x/0.4.0 carry ips[].version; 1.1.0 adds interface mtu/socketPath/pciID and route
// mtu/advmss/priority/table/scope, written only when the caller asked for 1.1.0.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "net/ip.h"

namespace railyard::cni {

struct Interface {
  std::string name;
  std::string mac;
  std::string sandbox;  // netns path; empty for host interfaces
  std::optional<int> mtu;
  std::string socket_path;
  std::string pci_id;
};

struct IpConfig {
  net::IpPrefix address;
  std::optional<net::IpAddress> gateway;
  std::optional<int> interface;  // index into interfaces
};

struct Route {
  net::IpPrefix dst;
  std::optional<net::IpAddress> gw;
  std::optional<int> mtu, advmss, priority, table, scope;
};

struct Result {
  std::vector<Interface> interfaces;
  std::vector<IpConfig> ips;
  std::vector<Route> routes;
  nlohmann::json dns = nlohmann::json::object();
};

// Throws CniError(kDecodeFailure) naming the field that is wrong.
Result parse_result(const nlohmann::json& j);
nlohmann::json to_json(const Result& r, const std::string& version);

}  // namespace railyard::cni
