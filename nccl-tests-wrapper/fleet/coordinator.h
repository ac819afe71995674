// Rank 0 of a fleet: opens the rendezvous, admits the ranks, runs the rounds (every pair, or the
// bisection's rings), probes suspect NICs, and classifies the matrix into the report. It serves
// as a rank too, from a thread of its own.
#pragma once

#include <iosfwd>

#include "nccl-tests-wrapper/fleet/pair.h"
#include "nccl-tests-wrapper/fleet/report.h"
#include "nccl-tests-wrapper/fleet/run.h"
#include "rdma/run/launch.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::validate {

// A run it cannot make still gives a report: why, and who had joined by then.
FleetReport coordinate(const FleetSettings& s, const rdma::Launch& launch, const FleetRails& rails,
                       const topology::Sysfs& sysfs, std::ostream& progress);

}  // namespace railyard::validate
