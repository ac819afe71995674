// The node's policy for railyard's CNI plugins: what a NetworkAttachmentDefinition may ask of a
// plugin that runs as root on the host. NADs are namespaced objects that tenants may create, so
// the directories a plugin writes in and the host interfaces it may hand to a pod are the node's
// to decide, not the NAD's. The DaemonSet installs the file (/etc/railyard/cni-policy.json;
// RAILYARD_CNI_POLICY names another, an environment only the node's runtime sets):
//
//   {"stateDir": "/var/lib/cni/railyard", "draDir": "/var/lib/railyard/dra",
//    "logDir": "/var/log/railyard", "netdevs": ["ens9f1"], "ipamTimeoutSeconds": 30}
//
// Every key is optional; a missing file means these defaults. `netdevs` lists host interfaces a
// NAD's `device` (or deviceID) may name besides the node's rail functions (the PFs topology/
// numbers as rails and their VFs); ["*"] allows any, for labs and tests only. An IPAM delegate
// still running after ipamTimeoutSeconds is killed and the command fails (CNI code 11, try
// again later) with everything rolled back: it must not hold a device's lock for ever.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "cni-protocol/env.h"

namespace railyard::cni {

inline constexpr const char* kDefaultPolicyFile = "/etc/railyard/cni-policy.json";

struct NodePolicy {
  std::string file;  // where it was read from, for messages ("" when built in)
  std::string state_dir = "/var/lib/cni/railyard";
  std::string dra_dir = "/var/lib/railyard/dra";
  std::string log_dir = "/var/log/railyard";
  std::vector<std::string> netdevs;
  bool any_netdev = false;
  std::chrono::milliseconds ipam_timeout{30'000};

  // Throws CniError(kInvalidConfig) naming the file and the field when it is unreadable or
  // malformed (a node whose policy cannot be read refuses everything rather than guess).
  static NodePolicy load(const Getenv& getenv);
  static NodePolicy parse(const std::string& text, const std::string& file);

  bool netdev_allowed(const std::string& name) const;
  // "(node policy FILE)", for error messages that tell an operator where the rule lives.
  std::string where() const;
  // The log file a NAD's logFile names, when it lies in log_dir: an absolute path, no "..", no
  // symbolic link on the way, its folder existing (nothing is created outside log_dir). Throws
  // CniError(kInvalidConfig) saying why not; nothing is created then.
  std::string log_file(const std::string& wanted) const;
};

}  // namespace railyard::cni
