#include "net/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

namespace railyard::net {
namespace {

constexpr long kNsfsMagic = 0x6e736673;

int open_netns(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      throw NetnsError(NetnsError::Kind::kMissing, "network namespace " + path + " does not exist");
    throw NetnsError(NetnsError::Kind::kNotNetns,
                     "cannot open " + path + ": " + std::strerror(errno));
  }
  struct statfs st;
  if (::fstatfs(fd, &st) != 0 || st.f_type != kNsfsMagic) {
    ::close(fd);
    throw NetnsError(NetnsError::Kind::kNotNetns, path + " is not a network namespace");
  }
  return fd;
}

}  // namespace

void check_netns_path(const std::string& path) {
  ::close(open_netns(path));
}

void run_in_netns(const std::string& path, const std::function<void()>& fn) {
  const int fd = open_netns(path);
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      if (::setns(fd, CLONE_NEWNET) != 0)
        throw NetnsError(NetnsError::Kind::kEnterFailed,
                         "cannot enter network namespace " + path + ": " + std::strerror(errno));
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  ::close(fd);
  if (error) std::rethrow_exception(error);
}

}  // namespace railyard::net
