// port-errors and link-flaps: a rail's port counters (the PMA's counters/ and the driver's
// hw_counters/) and its netdev's carrier_changes, read before the benchmarks and after them.
// Error counters fail on any growth (or above a configured threshold); RoCE retransmit and
// congestion counters are reported, and fail only above a threshold the config gives.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nccl-tests-wrapper/checks/finding.h"
#include "topology/sysfs/sysfs.h"

namespace railyard::validate {

struct RailCounters {
  // "counters/symbol_error", "hw_counters/np_cnp_sent", ...; what the port does not have is
  // absent.
  std::map<std::string, uint64_t> values;
  std::optional<uint64_t> carrier_changes;  // the netdev's
};

RailCounters read_rail_counters(const topology::Sysfs& sysfs, const std::string& rdma_device,
                                int port, const std::string& netdev);

// after - before, per counter both readings have (a counter that went backwards, a reset
// port, reads 0).
std::map<std::string, int64_t> counter_delta(const RailCounters& before, const RailCounters& after);

struct CounterLimits {
  // Growth allowed per counter name (without its directory); error counters default to 0.
  std::map<std::string, uint64_t> thresholds;
  int max_link_flaps = 0;
};

// The counters whose growth means a bad cable, transceiver or port.
const std::vector<std::string>& error_counter_names();
// Retransmission and congestion: reported with their growth, judged only against a threshold.
const std::vector<std::string>& roce_counter_names();

Finding judge_port_errors(const std::string& subject, const RailCounters& before,
                          const RailCounters& after, double seconds, const CounterLimits& limits);
Finding judge_link_flaps(const std::string& subject, const RailCounters& before,
                         const RailCounters& after, double seconds, const CounterLimits& limits);

}  // namespace railyard::validate
