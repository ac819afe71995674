// railyard-cni's commands. ADD records the device's original state before touching it and undoes
// every step in reverse when a later one fails (IPAM included); DEL gives the device back to the
// host under its original name and settings, whatever is left of the pod.
#pragma once

#include <nlohmann/json.hpp>

#include "cni-protocol/plugin.h"

namespace railyard::cni {

nlohmann::json cmd_add(const Request& req);
void cmd_del(const Request& req);
void cmd_check(const Request& req);
void cmd_status(const Request& req);
void cmd_gc(const Request& req);

}  // namespace railyard::cni
