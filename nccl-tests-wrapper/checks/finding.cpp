#include "nccl-tests-wrapper/checks/finding.h"

#include <cstdio>

namespace railyard::validate {

const char* to_string(State s) {
  switch (s) {
    case State::kOk:
      return "ok";
    case State::kWarn:
      return "warn";
    case State::kFail:
      return "fail";
    case State::kUnknown:
      return "unknown";
  }
  return "?";
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v <= 0 || v >= 1 ? "%.1f" : v >= 0.01 ? "%.3f" : "%.2g", v);
  return buf;
}

}  // namespace railyard::validate
