// Prometheus text exposition of the plugin's state (devices per pool by health, allocations,
// rail link state, registration), and the HTTP endpoint that serves it with /healthz.
#pragma once

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace railyard::deviceplugin {

struct Gauges {
  struct PoolCounts {
    int healthy = 0, unhealthy = 0;
    bool registered = false;
  };
  struct Rail {
    std::string device;  // RDMA device of the rail's PF
    bool up = false;
  };
  std::map<std::string, PoolCounts> pools;
  std::map<int, Rail> rails;
};

class Metrics {
 public:
  void set_gauges(Gauges g);
  void count_allocation(const std::string& resource, size_t devices);
  void count_allocate_error(const std::string& resource);
  void count_registration(const std::string& resource, bool ok);
  std::string render() const;

 private:
  struct Counters {
    uint64_t allocations = 0, devices = 0, errors = 0, registrations = 0, registration_errors = 0;
  };
  mutable std::mutex mu_;
  Gauges gauges_;
  std::map<std::string, Counters> counters_;
};

// The server's answer to `request`, the bytes a client sent, read under the server's limits (8 KiB
// of headers, 1 KiB of body): the whole HTTP response, or "" where the server would close the
// connection unanswered (junk, too large, incomplete). The fuzz target's way in.
std::string answer_request_bytes(std::string_view request, const Metrics& metrics,
                                 const std::function<bool()>& healthy);

// Serves GET /metrics and GET /healthz on "host:port" (":9408" listens on every address; the
// manifests bind the node's own address). One thread, every connection asynchronous under one
// deadline for its whole request, at most 64 at once (the oldest is dropped for a newcomer): idle
// or trickling clients on a shared node cannot stall the liveness probe.
// Boost.Beast, header-only: an HTTP library that brings no TLS stack to initialise (OpenSSL's
// start-up alone cost 3 MiB of resident memory with the first library tried).
class MetricsServer {
 public:
  MetricsServer(const Metrics& metrics, std::function<bool()> healthy);
  ~MetricsServer();
  // Throws std::runtime_error when the address is bad or taken.
  void start(const std::string& addr);
  int port() const { return port_; }

 private:
  struct Impl;
  struct Session;
  void accept();
  const Metrics& metrics_;
  std::function<bool()> healthy_;
  std::unique_ptr<Impl> impl_;
  std::list<std::shared_ptr<Session>> sessions_;  // oldest first; touched on the io thread only
  std::thread thread_;
  int port_ = 0;
};

}  // namespace railyard::deviceplugin
