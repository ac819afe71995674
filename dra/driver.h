// railyard-dra-driver's commands behind its main: `slices` prints the node's ResourceSlices;
// `publish` keeps them current in the API server (health as taints, networkData in claims'
// status, Events on the Node); `run` also serves the kubelet as the railyard.io DRA plugin.
#pragma once

#include <string>

#include "dra/kubelet/kubelet_plugin.h"
#include "dra/slices/slices.h"
#include "kube/api_client.h"

namespace railyard::dra {

// Where the node is read: the flags as given (empty: RAILYARD_SYSFS_ROOT, RAILYARD_RAILS_FILE).
struct Source {
  std::string sysfs_flag, rails_flag;
};

struct PublishOptions {
  kube::ApiConfig api;
  int interval_ms = 1000;
  int resync_s = 30;
  bool once = false;
  bool delete_on_exit = false;
  bool kubelet_plugin = false;  // `run`
  PluginOptions plugin;
  std::string gpu_devices = "env";
};

// Prints the slices as a v1 List; 0, 1 when sysfs read with errors, 2 when it could not be read.
int run_slices(const Source& src, const SliceOptions& options);

// Until SIGTERM or SIGINT (or once, with `once`); 0 when stopped, 1 when a --once publish failed,
// 2 when it could not start.
int run_publish(const Source& src, SliceOptions options, const PublishOptions& po);

}  // namespace railyard::dra
