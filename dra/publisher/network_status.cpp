#include "dra/publisher/network_status.h"

#include <algorithm>

#include "dra/handoff/handoff.h"
#include "dra/slices/slices.h"

namespace railyard::dra {

using nlohmann::json;

json network_entries(const PreparedClaim& claim, const std::filesystem::path& dir,
                     const std::string& pool) {
  json out = json::array();
  for (const auto& d : claim.devices) {
    if (d.type == to_string(DeviceType::kGpu)) continue;
    const auto nd = read_network_data(dir, d.pci);
    // A file left by another pod (this NIC's earlier life) is not this claim's.
    if (!nd || std::find(claim.pods.begin(), claim.pods.end(), nd->pod_uid) == claim.pods.end())
      continue;
    out.push_back({{"driver", kDriverName},
                   {"pool", pool},
                   {"device", d.name},
                   {"networkData", nd->to_status()}});
  }
  return out;
}

void put_device_status(kube::ApiClient& api, const PreparedClaim& claim, const json& entries) {
  const std::string path =
      "/apis/resource.k8s.io/v1/namespaces/" + claim.ns + "/resourceclaims/" + claim.name;
  for (int attempt = 0;; ++attempt) {
    json current = api.call("GET", path);
    if (current["metadata"].value("uid", "") != claim.uid) return;  // gone, or made anew
    json devices = json::array();
    for (const auto& e : current["status"].value("devices", json::array()))
      if (e.value("driver", "") != kDriverName) devices.push_back(e);
    for (const auto& e : entries) devices.push_back(e);
    current["status"]["devices"] = devices;
    const kube::ApiResponse r = api.request("PUT", path + "/status", &current);
    if (r.ok()) return;
    if (r.status != 409 || attempt > 0) throw kube::ApiError("PUT", path + "/status", r);
  }
}

}  // namespace railyard::dra
