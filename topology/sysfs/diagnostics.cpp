#include "topology/sysfs/diagnostics.h"

#include <algorithm>

namespace railyard::topology {

std::string Diagnostic::to_string() const {
  return std::string(level == Level::kError ? "error: " : "warning: ") + path + ": " + message;
}

void Diagnostics::warn(std::string path, std::string message) {
  items_.push_back({Diagnostic::Level::kWarning, std::move(path), std::move(message)});
}

void Diagnostics::error(std::string path, std::string message) {
  items_.push_back({Diagnostic::Level::kError, std::move(path), std::move(message)});
}

bool Diagnostics::has_errors() const {
  return std::any_of(items_.begin(), items_.end(),
                     [](const Diagnostic& d) { return d.level == Diagnostic::Level::kError; });
}

}  // namespace railyard::topology
