// Delegation to the IPAM plugin named by ipam.type, found in CNI_PATH, exec'd with the same
// environment (CNI_COMMAND changed) and the network config on stdin.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "cni-protocol/env.h"

namespace railyard::cni {

// Returns the plugin's stdout parsed (ADD) or null (DEL, CHECK). Throws CniError carrying the
// delegate's own code and message, or kInvalidConfig when the plugin is not found, or
// kTryAgainLater when it ran past `limit` (the node policy's ipamTimeoutSeconds) and was killed:
// a hung delegate must not hold the device's lock for ever.
nlohmann::json ipam_exec(const std::string& command, const Env& env, const nlohmann::json& netconf,
                         std::chrono::milliseconds limit);

// The network config to give the IPAM plugin: `netconf` with a cniVersion the plugin speaks, the
// newest it has that is not newer than ours (Debian's host-local stops at 1.0.0 while runtimes
// send 1.1.0). Asks the plugin (VERSION, one more exec) only for configs newer than 1.0.0.
nlohmann::json negotiate_ipam_version(const Env& env, nlohmann::json netconf,
                                      std::chrono::milliseconds limit);

// The path of the IPAM plugin binary, or "" when it is not in CNI_PATH.
std::string find_ipam_plugin(const std::string& type, const std::vector<std::string>& cni_path);

}  // namespace railyard::cni
