// One node check's answer about one subject (a rail, a bundle's path, the node).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace railyard::validate {

// kWarn: not ok, but not failing the node. kUnknown: the hardware gave no answer (a driver
// without DCB operations, config space that needs root), with the reason in the detail.
enum class State { kOk, kWarn, kFail, kUnknown };
const char* to_string(State s);  // "ok", "warn", "fail", "unknown"

// One decimal; three below 1 and two significant digits below 0.01, so that a crawling rail (a
// soft-RoCE one moves a few MB/s) does not print as 0.0.
std::string short_number(double v);

struct Finding {
  std::string subject;  // "rail 3 (mlx5_5)" or "node"
  std::string check;    // "port", "rate", "pcie", "mtu", "roce-qos", "pcie-acs", "port-errors"...
  State state = State::kOk;
  std::string detail;
  // What the verdict rests on, for machines: counter growth, ACS bits per bridge, PFC bits...
  nlohmann::json evidence = nlohmann::json::object();
  int rail = -1;  // the rail it is about (the node's rail index); -1: the node as a whole

  bool ok() const { return state == State::kOk; }
  bool fails() const { return state == State::kFail; }
  bool warns() const { return state == State::kWarn; }
  bool unknown() const { return state == State::kUnknown; }

  // ok or fail, as a yes/no judgement comes out.
  static Finding judged(std::string subject, std::string check, bool ok, std::string detail) {
    return Finding{std::move(subject), std::move(check), ok ? State::kOk : State::kFail,
                   std::move(detail)};
  }
  static Finding unknown_because(std::string subject, std::string check, std::string why) {
    return Finding{std::move(subject), std::move(check), State::kUnknown, std::move(why)};
  }
  Finding& with(nlohmann::json e) {
    evidence = std::move(e);
    return *this;
  }
  Finding& on_rail(int k) {
    rail = k;
    return *this;
  }
};

}  // namespace railyard::validate
