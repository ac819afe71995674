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
#include <vector>

#include "deviceplugin/api/deviceplugin.grpc.pb.h"

namespace railyard::testing {

class FakeKubelet final : public v1beta1::Registration::Service {
 public:
  explicit FakeKubelet(const std::filesystem::path& dir);
  ~FakeKubelet() override;
  void stop();  // shuts down and removes kubelet.sock, as a kubelet going away does

  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* req,
                        v1beta1::Empty*) override;

  // Waits until `n` registrations in total have arrived; returns them all (fewer on timeout).
  std::vector<v1beta1::RegisterRequest> wait_for(size_t n, std::chrono::milliseconds timeout);
  std::vector<v1beta1::RegisterRequest> received();

 private:
  std::filesystem::path socket_;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<v1beta1::RegisterRequest> got_;
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
