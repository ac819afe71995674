// What the DRA driver and railyard-cni hand each other on the node, as files under one
// directory (default /var/lib/railyard/dra), because a claim is prepared before the pod's
// network namespace exists and the netdev can only move into it when the runtime calls the CNI:
//
//   pods/<pod UID>/<claim UID>.json  the driver, at NodePrepareResources: the claim's NICs, for
//                                    the CNI to take one per attachment (removed at Unprepare)
//   net/<PCI address>.json           the CNI, once a NIC is in the pod: its interface, addresses
//                                    and MAC, which the driver reports as the claim's networkData
//                                    (removed at DEL)
//
// Small on purpose: railyard-cni is a static binary and links only this and nlohmann_json.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace railyard::dra {

inline constexpr const char* kDefaultHandoffDir = "/var/lib/railyard/dra";

struct ClaimedNic {
  std::string claim_uid, claim;  // claim: "<namespace>/<name>", for messages
  std::string device;            // the device's name in the pool ("vf-0000-64-00-2")
  std::string pci;
  int rail = -1;
};

// Throws std::runtime_error naming the file.
void write_pod_claim(const std::filesystem::path& dir, const std::string& pod_uid,
                     const std::string& claim_uid, const std::vector<ClaimedNic>& nics);
// Idempotent; the pod's folder goes with its last claim.
void remove_pod_claim(const std::filesystem::path& dir, const std::string& pod_uid,
                      const std::string& claim_uid);
// Every NIC of every claim prepared for the pod, by rail, then PCI address. Empty when none.
// Throws std::runtime_error for a file that cannot be read or parsed.
std::vector<ClaimedNic> pod_nics(const std::filesystem::path& dir, const std::string& pod_uid);

// A NIC's place in the pod, as KEP-4817's NetworkDeviceData has it.
struct NetworkData {
  std::string pod_uid;
  std::string interface_name;
  std::vector<std::string> ips;  // CIDR notation, "10.100.0.2/16"
  std::string hardware_address;
  nlohmann::json to_status() const;  // {"interfaceName", "ips", "hardwareAddress"}
  bool operator==(const NetworkData&) const = default;
};

void write_network_data(const std::filesystem::path& dir, const std::string& pci,
                        const NetworkData& data);
void remove_network_data(const std::filesystem::path& dir, const std::string& pci);
// nullopt when the NIC is not in a pod (no file, or one that cannot be parsed).
std::optional<NetworkData> read_network_data(const std::filesystem::path& dir,
                                             const std::string& pci);

}  // namespace railyard::dra
