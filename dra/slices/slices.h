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

#include "dra/slices/health.h"
#include "kube/railyard_names.h"
#include "topology/model/node.h"

namespace railyard::dra {

inline constexpr const char* kDriverName = kube::kDraDriver;
// resource.k8s.io/v1 limits (ResourceSliceSpec.devices, Device.attributes + capacity, taints
// per device); a slice whose devices carry taints allows 64 devices.
inline constexpr size_t kMaxDevicesPerSlice = 128;
inline constexpr size_t kMaxTaintedDevicesPerSlice = 64;
inline constexpr size_t kMaxAttributesPerDevice = 32;
inline constexpr size_t kMaxTaintsPerDevice = 16;

enum class DeviceType { kNic, kVf, kGpu };
std::string_view to_string(DeviceType t);  // "nic", "vf", "gpu": railyard.io/type

struct Device {
  std::string name;  // DNS label, from the PCI address: stable while the hardware is
  DeviceType type = DeviceType::kNic;
  std::string pci;  // the function's PCI address: the key of Health
  topology::FunctionRef fn;
  int gpu = -1;   // index into Node::gpus for a GPU
  int rail = -1;  // a NIC's or VF's rail; a GPU's bundle's (-1: none)
  bool healthy = true;
  std::string reason;  // why not healthy, from the health probe
  deviceplugin::Fault fault = deviceplugin::Fault::kNone;
  // When the driver first saw it unhealthy (RFC 3339, UTC): its taint's timeAdded, so that a
  // republish does not move it. Empty: the API server stamps it.
  std::string unhealthy_since;
  nlohmann::json attributes = nlohmann::json::object();  // qualified name -> {"int": 3}, ...
  nlohmann::json capacity = nlohmann::json::object();    // qualified name -> {"value": "400G"}

  nlohmann::json to_json() const;
};

// GPUs by index, then each rail's PF and its VFs, rail by rail. NICs off the rails (storage)
// are not published. A device missing from `health` counts as healthy.
std::vector<Device> build_devices(const topology::Node& node, const Health& health = {});

// What an unhealthy device becomes in the slices.
enum class Unhealthy {
  // Published with a device taint (KEP-5055; DRADeviceTaints, on by default since 1.36): the
  // scheduler gives it to no claim that does not tolerate the taint, a claim that does (a
  // diagnostic pod) still gets it, and the scheduler tells "broken" from "gone".
  kTaint,
  kMark,  // published with railyard.io/healthy false, for a DeviceClass selector to skip
  kDrop,  // left out until it recovers: for API servers without device taints
};

// The taint's effect: NoSchedule keeps running pods (a flapping port must not evict a training
// job); NoExecute also evicts pods whose claims hold the device; None only informs.
enum class TaintEffect { kNoSchedule, kNoExecute, kNone };
std::string_view to_string(TaintEffect e);  // as the API spells it

// The taint every driver-seen fault gets (DESIGN.md's name), so one toleration covers them; its
// value names the fault: "port-down" (port not ACTIVE), "no-carrier" (a RoCE PF without
// carrier), "gone" (the function or GPU left).
inline constexpr const char* kRailDownTaint = "railyard.io/rail-down";
std::string_view taint_value(deviceplugin::Fault f);

struct SliceOptions {
  std::string node_name;                     // spec.nodeName and spec.pool.name
  int64_t generation = 1;                    // spec.pool.generation: raise it on every republish
  size_t max_devices = kMaxDevicesPerSlice;  // at most 64 when tainting
  Unhealthy unhealthy = Unhealthy::kTaint;
  TaintEffect effect = TaintEffect::kNoSchedule;
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
