#include "test/support/deviceplugin_rig.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace railyard::testing {

struct FakeKubelet::Stream {
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  grpc::ClientContext ctx;
  std::thread reader;
};

FakeKubelet::FakeKubelet(const std::filesystem::path& dir, bool dial_back)
    : dir_(dir), socket_(dir / "kubelet.sock"), dial_back_(dial_back) {
  grpc::ServerBuilder b;
  b.AddListeningPort("unix:" + socket_.string(), grpc::InsecureServerCredentials());
  b.RegisterService(this);
  server_ = b.BuildAndStart();
  if (!server_) throw std::runtime_error("fake kubelet: cannot listen on " + socket_.string());
}

FakeKubelet::~FakeKubelet() {
  stop();
}

void FakeKubelet::stop() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_->Wait();
  server_.reset();
  std::vector<std::unique_ptr<Stream>> streams;
  {
    std::lock_guard lk(mu_);
    streams.swap(streams_);
  }
  for (auto& s : streams) {
    s->ctx.TryCancel();
    s->reader.join();
  }
  std::filesystem::remove(socket_);
}

grpc::Status FakeKubelet::Register(grpc::ServerContext*, const v1beta1::RegisterRequest* req,
                                   v1beta1::Empty*) {
  if (dial_back_) {
    auto stream = std::make_unique<Stream>();
    stream->stub = plugin_client(dir_ / req->endpoint());
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    v1beta1::DevicePluginOptions options;
    const auto st = stream->stub->GetDevicePluginOptions(&ctx, v1beta1::Empty{}, &options);
    if (!st.ok())
      return {grpc::StatusCode::UNKNOWN,
              "cannot dial back " + req->endpoint() + ": " + st.error_message()};
    auto* raw = stream.get();
    raw->reader = std::thread([this, raw] {
      auto reader = raw->stub->ListAndWatch(&raw->ctx, v1beta1::Empty{});
      v1beta1::ListAndWatchResponse r;
      bool first = true;
      while (reader->Read(&r)) {
        if (!first) continue;
        first = false;
        std::lock_guard lk(mu_);
        ++streams_listed_;
        cv_.notify_all();
      }
      reader->Finish();
    });
    std::lock_guard lk(mu_);
    streams_.push_back(std::move(stream));
  }
  std::lock_guard lk(mu_);
  got_.push_back(*req);
  cv_.notify_all();
  return grpc::Status::OK;
}

size_t FakeKubelet::wait_for_streams(size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  cv_.wait_for(lk, timeout, [&] { return streams_listed_ >= n; });
  return streams_listed_;
}

std::vector<v1beta1::RegisterRequest> FakeKubelet::wait_for(size_t n,
                                                            std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  cv_.wait_for(lk, timeout, [&] { return got_.size() >= n; });
  return got_;
}

std::vector<v1beta1::RegisterRequest> FakeKubelet::received() {
  std::lock_guard lk(mu_);
  return got_;
}

PluginProcess::PluginProcess(const std::vector<std::string>& args, std::filesystem::path log)
    : log_(std::move(log)) {
  std::vector<std::string> argv = {RAILYARD_BIN_DIR "/railyard-device-plugin"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  const int rc = posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
}

PluginProcess::~PluginProcess() {
  if (pid_ > 0 && status_ < 0 && stop(SIGTERM, std::chrono::seconds(5)) < 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void PluginProcess::signal(int sig) const {
  ::kill(pid_, sig);
}

int PluginProcess::wait(std::chrono::milliseconds timeout) {
  if (status_ >= 0) return status_;
  // waitpid has no timeout: a watcher thread bounds the wait without polling the child.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int status = 0;
  std::thread waiter([&] {
    int st = 0;
    ::waitpid(pid_, &st, 0);
    std::lock_guard lk(mu);
    status = st;
    done = true;
    cv.notify_all();
  });
  {
    std::unique_lock lk(mu);
    if (!cv.wait_for(lk, timeout, [&] { return done; })) {
      lk.unlock();
      ::kill(pid_, SIGKILL);  // frees the waiter; the caller sees -1
      waiter.join();
      status_ = 137;
      return -1;
    }
  }
  waiter.join();
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return status_;
}

int PluginProcess::stop(int sig, std::chrono::milliseconds timeout) {
  if (status_ >= 0) return status_;
  signal(sig);
  return wait(timeout);
}

std::string PluginProcess::log() const {
  std::ifstream in(log_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<v1beta1::DevicePlugin::Stub> plugin_client(const std::filesystem::path& socket) {
  return v1beta1::DevicePlugin::NewStub(
      grpc::CreateChannel("unix:" + socket.string(), grpc::InsecureChannelCredentials()));
}

}  // namespace railyard::testing
