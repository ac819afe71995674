// Plugin logging: stderr by default, or the config's logFile; level from logLevel
// (debug, info, warning, error; sriov-cni's names). Never stdout: stdout carries the result.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace railyard::cni {

void setup_logging(const nlohmann::json& config, const std::string& plugin);

}  // namespace railyard::cni
