// roce-qos: is a RoCE rail lossless on the priority its RDMA traffic uses? PFC on that priority
// (from DCB), the traffic class it maps to and that class's ETS share, the trust mode (DSCP
// entries in the APP table), and mlx5's ECN switches for that priority (notification point and
// reaction point). A driver that gives no DCB answer makes the check `unknown`, never `ok`.
#pragma once

#include <optional>
#include <string>

#include "nccl-tests-wrapper/checks/dcb.h"
#include "nccl-tests-wrapper/checks/finding.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::validate {

// mlx5's /sys/class/net/IF/ecn/roce_{np,rp}/enable/P; nullopt when the netdev has none.
struct EcnState {
  std::optional<bool> np, rp;
};
EcnState read_ecn(const topology::Sysfs& sysfs, const std::string& netdev, int priority);

// `driver` names the netdev's driver for the unknown case ("e1000e").
Finding judge_roce_qos(const std::string& subject, const std::string& netdev,
                       const std::string& driver, const DcbState& dcb, const EcnState& ecn,
                       int priority, bool require_ecn);

}  // namespace railyard::validate
