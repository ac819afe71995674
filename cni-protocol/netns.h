// CNI_NETNS as both plugins take it: checked before anything is changed, and locked while a
// plugin changes the pod's namespace (as the reference plugins do: table choice, link names).
#pragma once

#include <string>

#include "common/fd.h"

namespace railyard::cni {

// Throws CniError: code 3 (unknown container) when the path does not exist, 4 (invalid
// environment) when it is not a network namespace.
void require_netns(const std::string& path);

// An exclusive flock on the namespace file for the object's lifetime; none when it cannot be
// opened (require_netns has said why already).
class NetnsLock {
 public:
  explicit NetnsLock(const std::string& path);

 private:
  Fd fd_;
};

}  // namespace railyard::cni
