// Every rank of a fleet, rank 0's own included: join rank 0 (the hello: node name, rail
// addresses, MACs, rail firmware) and do what it orders (listen, pair, ring, probe) until done.
#pragma once

#include "nccl-tests-wrapper/fleet/pair.h"
#include "nccl-tests-wrapper/fleet/run.h"
#include "rdma/run/launch.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::validate {

// Throws rdma::NetError when rank 0 cannot be reached or goes away.
void serve(const FleetSettings& s, const rdma::Launch& launch, const FleetRails& rails,
           const topology::Sysfs& sysfs);

}  // namespace railyard::validate
