// One node check's answer about one subject (a rail, a bundle's path, the node).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace railyard::validate {

struct Finding {
  std::string subject;  // "rail 3 (mlx5_5)" or "node"
  std::string check;    // "port", "rate", "pcie", "mtu", "roce-qos", "pcie-acs", "port-errors"...
  bool ok = true;
  bool warning = false;  // not ok, but not failing the node
  std::string detail;
  // The hardware gave no answer (a driver without DCB operations, config space that needs
  // root): neither ok nor failing, with the reason in `detail`.
  bool unknown = false;
  // What the verdict rests on, for machines: counter growth, ACS bits per bridge, PFC bits...
  nlohmann::json evidence = nlohmann::json::object();
  int rail = -1;  // the rail it is about (the node's rail index); -1: the node as a whole

  bool fails() const { return !ok && !warning && !unknown; }
  static Finding unknown_because(std::string subject, std::string check, std::string why) {
    return Finding{std::move(subject), std::move(check), false, false, std::move(why), true};
  }
  Finding& with(nlohmann::json e) {
    evidence = std::move(e);
    return *this;
  }
};

}  // namespace railyard::validate
