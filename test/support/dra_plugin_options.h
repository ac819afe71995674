// The DRA kubelet plugin's options as the tests run it: every directory under one temp dir, the
// pool gpu-node-1, devices read under a fixture's root.
#pragma once

#include <filesystem>

#include "dra/kubelet/kubelet_plugin.h"

namespace railyard::testing {

inline dra::PluginOptions dra_plugin_options(const std::filesystem::path& dir,
                                             const std::filesystem::path& sysfs_root) {
  dra::PluginOptions opt;
  opt.cdi_dir = dir / "cdi";
  opt.state_dir = dir / "state";
  opt.registry_dir = dir / "registry";
  opt.plugin_dir = dir / "plugin";
  opt.prepare = {.pool = "gpu-node-1", .root = sysfs_root};
  return opt;
}

}  // namespace railyard::testing
