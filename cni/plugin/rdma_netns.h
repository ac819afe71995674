// RDMA devices and network namespaces. In exclusive mode (`rdma system set netns exclusive`) an
// RDMA device is visible only in the namespace it belongs to, so the pod needs its VF's RDMA
// device moved in with the netdev (what rdma-cni does); in shared mode every namespace sees it.
// Spoken over RDMA netlink (NETLINK_RDMA, the nldev client), in the calling thread's namespace.
#pragma once

#include <string>

namespace railyard::cni {

enum class RdmaNetnsMode { kUnavailable, kShared, kExclusive };

// kUnavailable when the kernel has no RDMA netlink (no ib_core) or does not report the mode.
RdmaNetnsMode rdma_netns_mode();
const char* to_string(RdmaNetnsMode m);

// Moves RDMA device `name` into the namespace `netns_fd`. Throws CniError(kInvalidConfig) when
// the device is not visible here or the kernel refuses.
void move_rdma_device(const std::string& name, int netns_fd);

}  // namespace railyard::cni
