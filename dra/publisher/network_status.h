// KEP-4817 networkData: once railyard-cni has put a claim's NIC into its pod (dra/handoff.h),
// the claim's status says which interface, addresses and MAC it became there. The driver's loop
// calls `entries` for each prepared claim and sends what changed.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "dra/slices/prepare.h"
#include "kube/api_client.h"

namespace railyard::dra {

// status.devices entries for the claim's NICs that are in one of its pods now (driver, pool,
// device, networkData), by device name. Empty when none is attached yet.
nlohmann::json network_entries(const PreparedClaim& claim, const std::filesystem::path& dir,
                               const std::string& pool);

// Replaces this driver's entries in the claim's status.devices (others' are kept): GET, then
// PUT of the status subresource with the resourceVersion read, once more on a conflict. Throws
// kube::ApiError.
void put_device_status(kube::ApiClient& api, const PreparedClaim& claim,
                       const nlohmann::json& entries);

}  // namespace railyard::dra
