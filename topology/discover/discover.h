// Builds the node model from sysfs under a root.
#pragma once

#include "topology/model/node.h"
#include "topology/model/rails.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::topology {

struct DiscoverOptions {
  // VF RDMA ports are rarely needed (the PF's port is the rail's); reading them on a node with
  // hundreds of VFs costs time.
  bool vf_ports = false;
  // Without VFs and GID tables: what the rails and one function's place need (resolve.h).
  bool vfs = true;
  bool pf_gids = true;
  bool gpus = true;  // without them, no bundles
};

// Reads GPUs and RDMA NICs. Problems land in Node::diagnostics; a device that could not be
// identified is left out with an error there, never guessed.
Node discover_devices(const Sysfs& sysfs, const DiscoverOptions& opts = {});

// discover_devices(), then rails (assign_rails) and bundles (compute_bundles).
// Throws RailsError when the rails configuration does not fit the node.
Node discover(const Sysfs& sysfs, const RailsConfig& rails, const DiscoverOptions& opts = {});

}  // namespace railyard::topology
