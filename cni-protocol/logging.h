// Plugin logging: stderr by default, or the config's logFile when it lies in the node policy's
// log directory (policy.h); level from logLevel (debug, info, warning, error; sriov-cni's names).
// Never stdout: stdout carries the result. Every message has its control characters escaped, so
// a NAD's value can never start a line of its own.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cni-protocol/policy.h"

namespace railyard::cni {

// Stderr only, before the configuration is known.
void setup_stderr_logging(const std::string& plugin);

// Throws CniError(kInvalidConfig) for a logFile the policy refuses when `strict`; otherwise (DEL,
// which must finish whatever the NAD says) logs to stderr and warns why.
void setup_logging(const nlohmann::json& config, const std::string& plugin,
                   const NodePolicy& policy, bool strict);

}  // namespace railyard::cni
