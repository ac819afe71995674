#include "nccl-tests-wrapper/checks/timeline.h"

#include <cstdio>
#include <optional>

#include "rdma/run/plot.h"

namespace railyard::validate {
namespace {

std::optional<double> read_counter(const std::filesystem::path& p) {
  FILE* f = std::fopen(p.c_str(), "r");
  if (!f) return std::nullopt;
  unsigned long long v = 0;
  const bool ok = std::fscanf(f, "%llu", &v) == 1;
  std::fclose(f);
  if (!ok) return std::nullopt;
  return static_cast<double>(v);
}

}  // namespace

CounterSource rail_byte_counter(const topology::Sysfs& sysfs, const std::string& rdma_device,
                                int port, const std::string& netdev) {
  if (!rdma_device.empty()) {
    const auto f = sysfs.sys("class/infiniband/" + rdma_device + "/ports/" + std::to_string(port) +
                             "/counters/port_xmit_data");
    if (read_counter(f)) return {f, 4, "port_xmit_data"};
  }
  if (!netdev.empty()) {
    const auto f = sysfs.sys("class/net/" + netdev + "/statistics/tx_bytes");
    if (read_counter(f)) return {f, 1, "tx_bytes"};
  }
  return {};
}

TimelineSampler::TimelineSampler(std::vector<Rail> rails, std::chrono::milliseconds period)
    : rails_(std::move(rails)), period_(period) {
  for (const auto& r : rails_) timeline_.rails.push_back({r.name, r.counter.name, {}});
  // The first reading is taken here, so that whatever the caller starts next is counted.
  start_ = std::chrono::steady_clock::now();
  for (const auto& r : rails_) first_.push_back(read_counter(r.counter.file));
  thread_ = std::thread([this] { loop(); });
}

TimelineSampler::~TimelineSampler() {
  stop();
}

void TimelineSampler::loop() {
  using clock = std::chrono::steady_clock;
  const auto start = start_;
  std::vector<std::optional<double>> last = first_;
  auto last_t = start;
  std::unique_lock lock(mu_);
  // One sample a period, and a last one when stopped, so that every byte of the run is counted.
  for (bool last_round = false; !last_round;) {
    last_round = cv_.wait_for(lock, period_, [this] { return stopping_; });
    const auto now = clock::now();
    const double dt = std::chrono::duration<double>(now - last_t).count();
    timeline_.t.push_back(std::chrono::duration<double>(now - start).count());
    for (size_t i = 0; i < rails_.size(); ++i) {
      const auto v = read_counter(rails_[i].counter.file);
      double gbps = 0;
      if (v && last[i] && *v >= *last[i] && dt > 0)
        gbps = (*v - *last[i]) * rails_[i].counter.bytes_per_unit / dt / 1e9;
      timeline_.rails[i].gbps.push_back(gbps);
      last[i] = v;
    }
    last_t = now;
  }
}

Timeline TimelineSampler::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  return timeline_;
}

std::string timeline_svg(const Timeline& t) {
  std::vector<rdma::Series> series;
  for (const auto& r : t.rails) {
    rdma::Series s{r.name, {}};
    for (size_t i = 0; i < r.gbps.size() && i < t.t.size(); ++i)
      s.points.push_back({t.t[i], r.gbps[i]});
    series.push_back(std::move(s));
  }
  return rdma::svg_plot("Throughput per rail during the run across all rails", series,
                        rdma::Axes{false, "time (s)", "transmitted (GB/s)"});
}

}  // namespace railyard::validate
