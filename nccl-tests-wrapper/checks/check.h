// The node checks' one shape. A check is a file in checks/ with a NodeCheck and one row in
// table.cpp; railyard-validate run (run/validate.cpp) calls every enabled row twice: at rest,
// before the benchmarks, and after them, with what they left (NCCL's log, the port counters).
// Adding a check: its settings in settings.h (and run/config.cpp reads them), its file, its row.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/checks/counters.h"
#include "nccl-tests-wrapper/checks/finding.h"
#include "nccl-tests-wrapper/checks/settings.h"
#include "nccl-tests-wrapper/nccl/nccl_log.h"
#include "topology/model/node.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::validate {

// The node as the checks read it.
struct NodeView {
  const topology::Node& node;
  const topology::Sysfs& sysfs;
  const Checks& settings;

  size_t rails() const { return node.rails.size(); }
  const topology::Nic& rail_nic(size_t k) const {
    return node.nics[static_cast<size_t>(node.rails[k])];
  }
  std::string rail_name(size_t k) const;  // "rail 3 (mlx5_5)"
};

// One benchmark run, as the checks after the runs read it (the run's own fields, referred to:
// they outlive the checks).
struct RunSeen {
  const std::string& name;  // "rail 3 (mlx5_5)", "all rails"
  int rail;                 // -1: every rail
  bool could_not_run;
  const NcclNetUse& nccl;
  const std::vector<std::string>& rdma_devices;  // the rails it drove
};

// What the benchmarks left: each run, and each rail's counters before and after them.
struct RunsSeen {
  std::vector<RunSeen> runs;
  std::vector<RailCounters> before, after;  // by rail
  double seconds = 0;                       // between the two readings
};

class NodeCheck {
 public:
  virtual ~NodeCheck() = default;
  // At rest, before the benchmarks: what the node shows.
  virtual void at_rest(const NodeView&, std::vector<Finding>&) const {}
  // After the benchmarks: what they left behind.
  virtual void after_runs(const NodeView&, const RunsSeen&, std::vector<Finding>&) const {}
};

struct CheckRow {
  const char* name;  // the `check` of its findings (the first, where it has several)
  bool (*enabled)(const Checks&);
  const NodeCheck& check;
};

// Every node check, in the order of their findings on a rail.
const std::vector<CheckRow>& check_table();
std::vector<const NodeCheck*> enabled_checks(const Checks& settings);

// The checks, one per file (table.cpp lists them).
const NodeCheck& port_check();
const NodeCheck& rate_check();
const NodeCheck& pcie_link_check();
const NodeCheck& firmware_check();
const NodeCheck& mtu_check();
const NodeCheck& roce_qos_check();
const NodeCheck& roce_gid_check();
const NodeCheck& path_check();
const NodeCheck& gpudirect_check();
const NodeCheck& nccl_path_check();
const NodeCheck& counters_check();

}  // namespace railyard::validate
