// The device plugin's configuration file (--config, JSON), in sriov-network-device-plugin's shape
// so that operators can carry their selectors over:
//
//   {"resourcePrefix": "railyard.io",
//    "healthPollMs": 500,
//    "gpuDevices": "nodes",                 // "nodes" | "cdi" | "env"
//    "resourceList": [
//      {"resourceName": "bundle", "kind": "bundle", "nicFunction": "pf"},
//      {"resourceName": "rail", "kind": "vf", "perRail": true},
//      {"resourceName": "storage", "kind": "pf", "selectors": {"linkTypes": ["ethernet"]}}]}
//
// kind "bundle": one GPU + its NIC function (topology/bundles/bundles.h), device ID = the NIC
// function's PCI address; "vf": SR-IOV VFs; "pf": whole PFs. "perRail": one pool per rail, named
// <resourceName><k>. Without a file, or without resourceList, the default is the bundle pool
// and per-rail VF pools (DESIGN.md).
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/model/selectors.h"

namespace railyard::deviceplugin {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class PoolKind { kBundle, kVf, kPf };
enum class GpuDevices { kNodes, kCdi, kEnv };

struct PoolConfig {
  std::string name;  // without the prefix
  PoolKind kind = PoolKind::kVf;
  topology::Selectors selectors;
  bool per_rail = false;
  bool bundle_vf = false;  // bundles: pair the GPU with a VF of its NIC instead of the PF
  int bundle_vf_index = 0;
  std::optional<bool> nccl_ib_hca;  // set NCCL_IB_HCA; default: bundles only
};

struct Config {
  std::string resource_prefix = "railyard.io";
  // Half the 1 s a health change may take to reach the kubelet; netlink events come sooner.
  int health_poll_ms = 500;
  GpuDevices gpu_devices = GpuDevices::kNodes;
  std::string cdi_kind = "nvidia.com/gpu";  // CDI names are <cdiKind>=<GPU index>
  std::vector<PoolConfig> pools;
  std::string source;  // the file, for messages; empty for the built-in default

  static Config defaults();
  // Throws ConfigError naming the file and the field.
  static Config parse(const std::string& text, const std::string& source);
  static Config load(const std::filesystem::path& file);
};

// Kubernetes' rule for an extended resource name: "<DNS subdomain>/<name>", name at most 63
// characters of [A-Za-z0-9_.-] starting and ending alphanumeric; not in kubernetes.io.
bool valid_resource_name(const std::string& full_name);

// sriov-network-device-plugin's env name: PCIDEVICE_ + the full resource name upper-cased with
// every character that is not a letter or digit replaced by '_'.
std::string pcidevice_env_name(const std::string& full_name);

}  // namespace railyard::deviceplugin
