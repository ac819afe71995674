#include "cni-protocol/netns.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>

#include "cni-protocol/error.h"
#include "net/netns.h"

namespace railyard::cni {

void require_netns(const std::string& path) {
  try {
    net::check_netns_path(path);
  } catch (const net::NetnsError& e) {
    throw CniError(
        e.kind() == net::NetnsError::Kind::kMissing ? kUnknownContainer : kInvalidEnvironment,
        std::string("CNI_NETNS: ") + e.what());
  }
}

NetnsLock::NetnsLock(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
  if (fd_.get() < 0) return;
  while (::flock(fd_.get(), LOCK_EX) != 0 && errno == EINTR) {
  }
}

}  // namespace railyard::cni
