// The names railyard writes into API objects and reads back: DRA device attributes (the DRA
// driver publishes them, claims select on them, the validator's --apply finds a rail's devices by
// them) and the validation's label, taints and annotations. One place, so that a writer and its
// readers cannot drift apart; manifests/dra/claims and the cluster tests spell them too.
#pragma once

namespace railyard::kube {

inline constexpr const char* kDraDriver = "railyard.io";

// DRA device attributes and capacity (dra/README.md lists them with their meaning).
namespace attr {
inline constexpr const char* kType = "railyard.io/type";  // "gpu", "nic", "vf"
inline constexpr const char* kRail = "railyard.io/rail";
inline constexpr const char* kIndex = "railyard.io/index";  // a GPU's
inline constexpr const char* kHealthy = "railyard.io/healthy";
inline constexpr const char* kPcieSwitch = "railyard.io/pcieSwitch";
inline constexpr const char* kPcieTopSwitch = "railyard.io/pcieTopSwitch";
inline constexpr const char* kPciVendorId = "railyard.io/pciVendorID";
inline constexpr const char* kPciDeviceId = "railyard.io/pciDeviceID";
inline constexpr const char* kRdmaDevice = "railyard.io/rdmaDevice";
inline constexpr const char* kIfName = "railyard.io/ifName";
inline constexpr const char* kLinkLayer = "railyard.io/linkLayer";
inline constexpr const char* kVf = "railyard.io/vf";
inline constexpr const char* kPathClass = "railyard.io/pathClass";
inline constexpr const char* kBundleRdmaDevice = "railyard.io/bundleRdmaDevice";
inline constexpr const char* kLinkSpeed = "railyard.io/linkSpeed";  // capacity
// Kubernetes' own (k8s.io/dynamic-resource-allocation/deviceattribute).
inline constexpr const char* kPcieRoot = "resource.kubernetes.io/pcieRoot";
inline constexpr const char* kPciBusId = "resource.kubernetes.io/pciBusID";
inline constexpr const char* kNumaNode = "resource.kubernetes.io/numaNode";
}  // namespace attr

// What railyard-validate --apply leaves on the cluster.
inline constexpr const char* kValidationTaint = "railyard.io/validation";
inline constexpr const char* kUnvalidatedTaint = "railyard.io/unvalidated";
inline constexpr const char* kValidatedLabel = "railyard.io/validated";
inline constexpr const char* kEvidenceAnnotation = "railyard.io/evidence";
// The failures a --node-patch (run) carries; the fleet's patch carries its own.
inline constexpr const char* kValidationAnnotation = "railyard.io/validation";

}  // namespace railyard::kube
