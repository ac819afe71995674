#include "dra/kubelet/health_feed.h"

namespace railyard::dra {

void HealthFeed::update(const std::vector<Device>& devices) {
  std::vector<HealthReport> now;
  now.reserve(devices.size());
  for (const auto& d : devices) {
    HealthReport r{d.name, d.healthy, d.healthy ? "" : d.reason};
    if (!d.healthy && r.message.empty()) r.message = "unhealthy";
    if (r.message.size() > kMaxHealthMessage)
      r.message = r.message.substr(0, kMaxHealthMessage - 3) + "...";
    now.push_back(std::move(r));
  }
  {
    std::lock_guard lk(mu_);
    if (version_ > 0 && now == reports_) return;
    reports_ = std::move(now);
    ++version_;
  }
  changed_.notify_all();
}

HealthFeed::Snapshot HealthFeed::wait_after(uint64_t seen, std::chrono::milliseconds limit) {
  std::unique_lock lk(mu_);
  changed_.wait_for(lk, limit, [&] { return closed_ || version_ > seen; });
  return {version_, reports_};
}

void HealthFeed::close() {
  {
    std::lock_guard lk(mu_);
    closed_ = true;
  }
  changed_.notify_all();
}

bool HealthFeed::closed() const {
  std::lock_guard lk(mu_);
  return closed_;
}

}  // namespace railyard::dra
