// One resource's DevicePlugin gRPC service on its own unix socket in the kubelet's directory.
// The plugin's main loop hands it snapshots (pool, node model, health); ListAndWatch streams
// push every change, and the RPCs read the latest snapshot, so Allocate never waits on sysfs.
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "deviceplugin/api/deviceplugin.grpc.pb.h"
#include "deviceplugin/config.h"
#include "deviceplugin/health.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/pools.h"

namespace railyard::deviceplugin {

struct Snapshot {
  std::shared_ptr<const topology::Node> node;
  std::shared_ptr<const Config> config;
  Pool pool;
  std::map<std::string, DeviceHealth> health;  // device ID -> health
};

// "railyard.io/rail0" -> "railyard.io_rail0.sock": a bare name, as RegisterRequest.endpoint wants.
std::string socket_name_for(const std::string& resource);

class ListWatcher;

// gRPC's callback API: a ListAndWatch stream is a reactor, not a thread parked in a handler, and
// a unary call is answered on the thread that read it. Fewer threads, less memory, no hand-off.
class ResourceServer {
 public:
  ResourceServer(std::string resource, std::filesystem::path dir, std::filesystem::path devinfo_dir,
                 Metrics& metrics);
  ~ResourceServer();

  const std::string& resource() const { return resource_; }
  std::string socket_name() const { return socket_name_for(resource_); }
  std::filesystem::path socket_path() const { return dir_ / socket_name(); }

  // Replaces the snapshot; ListAndWatch streams send the new list when IDs, health or NUMA
  // changed.
  void update(std::shared_ptr<const Snapshot> snap);
  // Listens on the socket (a stale one is replaced). Throws std::runtime_error.
  void start();
  // Ends the streams, stops serving and removes the socket. Idempotent.
  void stop();
  bool serving() const;

 private:
  class Service;
  friend class ListWatcher;
  std::shared_ptr<const Snapshot> snapshot() const;
  grpc::Status preferred(const v1beta1::PreferredAllocationRequest& req,
                         v1beta1::PreferredAllocationResponse& out) const;
  grpc::Status allocate(const v1beta1::AllocateRequest& req, v1beta1::AllocateResponse& out);
  ListWatcher* watch();
  void forget(ListWatcher* w);

  const std::string resource_;
  const std::filesystem::path dir_, devinfo_dir_;
  Metrics& metrics_;
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> snap_;
  v1beta1::ListAndWatchResponse list_;  // what the streams send
  uint64_t generation_ = 0;
  std::map<ListWatcher*, std::shared_ptr<ListWatcher>> watchers_;
  std::condition_variable watchers_gone_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

v1beta1::ListAndWatchResponse device_list(const Snapshot& snap);

}  // namespace railyard::deviceplugin
