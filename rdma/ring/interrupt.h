// A wake-up another thread can raise once, for a link that sleeps in poll(): its fd turns
// readable and stays so. The ring raises it on every other rail when one rail fails, so a rank
// names a dead neighbour when the first rail sees it, not when the last rail's timeout runs out.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace railyard::rdma {

class Interrupt {
 public:
  Interrupt() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (fd_ < 0) throw std::runtime_error("eventfd failed");
  }
  ~Interrupt() { ::close(fd_); }
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;

  // Async-safe and lasting: once raised, fd() stays readable (nothing ever reads it).
  void raise() noexcept {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace railyard::rdma
