#include "nccl-tests-wrapper/fleet/run.h"

#include <stdexcept>

#include "common/k8s_names.h"
#include "common/log_escape.h"
#include "nccl-tests-wrapper/fleet/coordinator.h"
#include "nccl-tests-wrapper/fleet/pair.h"
#include "nccl-tests-wrapper/fleet/serve.h"
#include "rdma/run/launch.h"

namespace railyard::validate {
namespace {

void check_settings(const FleetSettings& s, const rdma::Launch& launch) {
  if (launch.world < 2)
    throw std::invalid_argument("a fleet has at least 2 ranks, not " +
                                std::to_string(launch.world));
  if (s.bench.transport != "tcp" && s.bench.transport != "verbs")
    throw std::invalid_argument("fleet runs over --transport tcp or verbs");
  // Checked here, once, rather than failing every rail of every pair the same way.
  if (rdma::bench::parse_size(s.bench.max_bytes) == 0)
    throw std::invalid_argument("--size " + s.bench.max_bytes + ": at least 1 byte");
  if (s.bench.iters < 1 || s.bench.warmup < 0 || s.bench.timeout_s < 1)
    throw std::invalid_argument("-n and --timeout are at least 1, -w at least 0");
  if (s.mode != "pairwise" && s.mode != "bisect")
    throw std::invalid_argument("--mode is pairwise or bisect, not '" + s.mode + "'");
  // The name goes into node patches and printed kubectl lines, and rank 0 refuses a hello
  // without a proper one.
  if (!is_dns1123_subdomain(s.node_name))
    throw std::invalid_argument("--node-name '" + escape_controls(s.node_name) +
                                "' is not a Kubernetes node name (RFC 1123: lower case letters, "
                                "digits, '-' and '.')");
}

}  // namespace

std::optional<FleetReport> run_fleet(const FleetSettings& s, std::ostream& progress) {
  const rdma::Launch launch =
      rdma::resolve_launch({s.bench.rank, s.bench.world, s.bench.rendezvous, ""}, rdma::bench::env);
  if (launch.rank != 0) {
    check_settings(s, launch);
    const topology::Sysfs sysfs(topology::sysfs_root_from(""));
    serve(s, launch, resolve_fleet_rails(s.bench, sysfs), sysfs);
    return std::nullopt;
  }
  try {
    check_settings(s, launch);
    const topology::Sysfs sysfs(topology::sysfs_root_from(""));
    return coordinate(s, launch, resolve_fleet_rails(s.bench, sysfs), sysfs, progress);
  } catch (const std::exception& e) {  // before the rendezvous opened
    return fleet_not_run(e.what(), {}, 0);
  }
}

}  // namespace railyard::validate
