// A kubelet stand-in for the device plugin tests: a Registration server on <dir>/kubelet.sock
// that records every RegisterRequest, and railyard-device-plugin run as a child process the way
// the DaemonSet runs it, with clients for its sockets. Waits are on what the plugin does (a
// registration arriving, a stream message), bounded by deadlines; nothing sleeps.
#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deviceplugin/api/deviceplugin.grpc.pb.h"

namespace railyard::testing {

// Like a real kubelet, by default it dials back inside Register: GetDevicePluginOptions on the
// plugin's endpoint (Register fails when that fails, as older kubelets do), then a ListAndWatch
// stream held open until the kubelet stops.
class FakeKubelet final : public v1beta1::Registration::Service {
 public:
  explicit FakeKubelet(const std::filesystem::path& dir, bool dial_back = true);
  ~FakeKubelet() override;
  void stop();  // shuts down and removes kubelet.sock, as a kubelet going away does

  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* req,
                        v1beta1::Empty*) override;

  // Waits until `n` registrations in total have arrived; returns them all (fewer on timeout).
  std::vector<v1beta1::RegisterRequest> wait_for(size_t n, std::chrono::milliseconds timeout);
  std::vector<v1beta1::RegisterRequest> received();
  // Waits until `n` ListAndWatch streams opened by dialling back got their first list.
  size_t wait_for_streams(size_t n, std::chrono::milliseconds timeout);

 private:
  struct Stream;
  std::filesystem::path dir_, socket_;
  bool dial_back_;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<v1beta1::RegisterRequest> got_;
  std::vector<std::unique_ptr<Stream>> streams_;
  size_t streams_listed_ = 0;
};

// railyard-device-plugin as a child, its stdout and stderr in `log`. The destructor ends it
// (SIGTERM, then SIGKILL) so that a failing test leaves no process behind.
class PluginProcess {
 public:
  PluginProcess(const std::vector<std::string>& args, std::filesystem::path log);
  ~PluginProcess();
  // Sends `sig` and waits for the exit status (-1 when it did not end within `timeout`).
  int stop(int sig, std::chrono::milliseconds timeout);
  // Waits for the child to end by itself.
  int wait(std::chrono::milliseconds timeout);
  void signal(int sig) const;
  pid_t pid() const { return pid_; }
  std::string log() const;

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::filesystem::path log_;
};

std::unique_ptr<v1beta1::DevicePlugin::Stub> plugin_client(const std::filesystem::path& socket);

}  // namespace railyard::testing
