// A per-rail throughput timeline: while the run across all rails goes, each rail's transmit
// counter is sampled (~10 Hz) so that a rail that stalls or dips shows at a glance, in the
// report's JSON and as an SVG plot (GB/s per rail over time).
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "topology/sysfs/sysfs.h"

namespace railyard::validate {

struct TimelineRail {
  std::string name;          // "rail 0 (mlx5_0)"
  std::string source;        // "port_xmit_data" or "tx_bytes"
  std::vector<double> gbps;  // GB/s over the interval ending at Timeline::t[i]
};

struct Timeline {
  std::vector<double> t;  // seconds since the sampler started
  std::vector<TimelineRail> rails;
};

// Where a rail's bytes are counted: the port's port_xmit_data (4-byte words; InfiniBand, and
// RoCE on mlx5) when it exists, else the netdev's statistics/tx_bytes (rxe, whose traffic goes
// through the netdev). Empty path when neither exists.
struct CounterSource {
  std::filesystem::path file;
  double bytes_per_unit = 1;
  std::string name;
};
CounterSource rail_byte_counter(const topology::Sysfs& sysfs, const std::string& rdma_device,
                                int port, const std::string& netdev);

class TimelineSampler {
 public:
  struct Rail {
    std::string name;
    CounterSource counter;
  };
  TimelineSampler(std::vector<Rail> rails, std::chrono::milliseconds period);
  ~TimelineSampler();
  TimelineSampler(const TimelineSampler&) = delete;
  TimelineSampler& operator=(const TimelineSampler&) = delete;
  Timeline stop();

 private:
  void loop();
  std::vector<Rail> rails_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::optional<double>> first_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Timeline timeline_;
  std::thread thread_;
};

std::string timeline_svg(const Timeline& t);

}  // namespace railyard::validate
