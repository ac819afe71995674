// A VF's admin settings, set on its PF over netlink (IFLA_VF_*), as sriov-cni does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cni/plugin/config.h"
#include "net/netlink.h"

namespace railyard::cni {

// Applies `settings` to VF `vf` of `pf` and returns what they were before (for restore_vf).
// Throws CniError(kInvalidConfig) when the PF reports no such VF (PFs whose driver exposes no
// VF info over netlink do exist) or refuses a setting.
nlohmann::json apply_vf(const net::RouteSocket& sk, const std::string& pf, int vf,
                        const VfSettings& settings);
void restore_vf(const net::RouteSocket& sk, const std::string& pf, int vf,
                const nlohmann::json& original);

}  // namespace railyard::cni
