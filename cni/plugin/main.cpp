// railyard-cni: one VF (or any netdev) per rail into the pod, wired for RDMA; see ../README.md.
#include <iostream>

#include "cni-protocol/plugin.h"
#include "cni/plugin/attach.h"

int main() {
  namespace cni = railyard::cni;
  cni::Handlers h;
  h.add = cni::cmd_add;
  h.del = cni::cmd_del;
  h.check = cni::cmd_check;
  h.status = cni::cmd_status;
  h.gc = cni::cmd_gc;
  return cni::plugin_main("railyard-cni", h, std::cin, std::cout, cni::process_getenv());
}
