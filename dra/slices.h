// This node's DRA ResourceSlices (resource.k8s.io/v1), built from the node model that the device
// plugin uses (topology/): each rail NIC's PF and VFs, and each GPU, with the standard PCI
// attributes and railyard's rail, switch and path class. What a claim can select on, and why
// the names are what they are: dra/README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "dra/health.h"
#include "topology/model/node.h"

namespace railyard::dra {

inline constexpr const char* kDriverName = "railyard.io";
// resource.k8s.io/v1 limits (ResourceSliceSpec.devices, Device.attributes + capacity); a
// slice whose devices use taints or counters allows 64, and ours use neither.
inline constexpr size_t kMaxDevicesPerSlice = 128;
inline constexpr size_t kMaxAttributesPerDevice = 32;

enum class DeviceType { kNic, kVf, kGpu };
std::string_view to_string(DeviceType t);  // "nic", "vf", "gpu": railyard.io/type

struct Device {
  std::string name;  // DNS label, from the PCI address: stable while the hardware is
  DeviceType type = DeviceType::kNic;
  std::string pci;  // the function's PCI address: the key of Health
  topology::FunctionRef fn;
  int gpu = -1;  // index into Node::gpus for a GPU
  bool healthy = true;
  std::string reason;                                    // why not healthy, from the health probe
  nlohmann::json attributes = nlohmann::json::object();  // qualified name -> {"int": 3}, ...
  nlohmann::json capacity = nlohmann::json::object();    // qualified name -> {"value": "400G"}

  nlohmann::json to_json() const;
};

// GPUs by index, then each rail's PF and its VFs, rail by rail. NICs off the rails (storage)
// are not published. A device missing from `health` counts as healthy.
std::vector<Device> build_devices(const topology::Node& node, const Health& health = {});

enum class Unhealthy {
  kDrop,  // left out until it recovers: no claim can be given it
  kMark,  // published with railyard.io/healthy false, for a DeviceClass selector to skip
};

struct SliceOptions {
  std::string node_name;   // spec.nodeName and spec.pool.name
  int64_t generation = 1;  // spec.pool.generation: raise it on every republish
  size_t max_devices = kMaxDevicesPerSlice;
  Unhealthy unhealthy = Unhealthy::kDrop;
};

// The pool as one or more ResourceSlices, named <node>-railyard.io-<n>, each with the pool's
// resourceSliceCount. A node without devices gets one empty slice, so that a republished pool
// always replaces the generation before it.
std::vector<nlohmann::json> build_slices(const std::vector<Device>& devices,
                                         const SliceOptions& options);

// build_devices() then build_slices().
std::vector<nlohmann::json> node_slices(const topology::Node& node, const Health& health,
                                        const SliceOptions& options);

}  // namespace railyard::dra
