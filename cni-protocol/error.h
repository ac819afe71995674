// CNI errors with the spec's codes. Plugins throw CniError; plugin_main() prints it as the spec's
// error object on stdout and exits 1.
#pragma once

#include <stdexcept>
#include <string>

namespace railyard::cni {

enum ErrorCode : int {
  kIncompatibleVersion = 1,
  kUnsupportedField = 2,
  kUnknownContainer = 3,
  kInvalidEnvironment = 4,
  kIoFailure = 5,
  kDecodeFailure = 6,
  kInvalidConfig = 7,
  kTryAgainLater = 11,
  kPluginNotAvailable = 50,         // STATUS
  kPluginLimitedConnectivity = 51,  // STATUS
  kCheckFailed = 100,               // plugin-specific (>= 100): CHECK found a difference
  kInternal = 999,
};

class CniError : public std::runtime_error {
 public:
  CniError(int code, const std::string& msg, std::string details = "")
      : std::runtime_error(msg), code_(code), details_(std::move(details)) {}
  int code() const { return code_; }
  const std::string& details() const { return details_; }

 private:
  int code_;
  std::string details_;
};

}  // namespace railyard::cni
