// A file descriptor that closes itself: sockets and timerfds held across early returns and
// exceptions (the device plugin's health loop, the fleet's ARP probe).
#pragma once

#include <unistd.h>

namespace railyard {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace railyard
