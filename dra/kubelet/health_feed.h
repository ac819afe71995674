// Every published device's health as the kubelet's resource health stream (KEP-4680) sends it:
// the publisher updates it each time it reads sysfs, and each open stream waits here for a
// change. Kept apart from gRPC so that the waiting and the wording are tested on their own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "dra/slices/slices.h"

namespace railyard::dra {

struct HealthReport {
  std::string device;  // the device's name in the pool
  bool healthy = true;
  std::string message;  // why not, at most kMaxHealthMessage characters; empty when healthy
  bool operator==(const HealthReport&) const = default;
};

// The kubelet truncates longer messages itself; ours are cut where they would be.
inline constexpr size_t kMaxHealthMessage = 1024;

class HealthFeed {
 public:
  // The devices as just read. Wakes the streams when any device's health or message changed,
  // or a device came or went.
  void update(const std::vector<Device>& devices);
  // Waits up to `limit` for a version after `seen` (or close()), then returns the current one
  // with its reports. Version 0: nothing read yet.
  struct Snapshot {
    uint64_t version = 0;
    std::vector<HealthReport> reports;
  };
  Snapshot wait_after(uint64_t seen, std::chrono::milliseconds limit);
  // Ends every wait at once: the plugin is stopping.
  void close();
  bool closed() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  uint64_t version_ = 0;
  std::vector<HealthReport> reports_;
  bool closed_ = false;
};

}  // namespace railyard::dra
