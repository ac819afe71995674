// Small TCP helpers: listening and connecting bound to a rail's address, and whole-buffer I/O
// with a deadline, so a peer that dies turns into an error naming it instead of a hang.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

namespace railyard::rdma {

class NetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  std::string host;
  int port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
  // "10.0.0.1:29500" or "rank0.svc:29500" (resolved when connecting); throws NetError
  static Endpoint parse(const std::string& text);
};

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Listens on host (port 0: any); the bound port is in local_port().
  static Socket listen_on(const std::string& host, int port);
  int local_port() const;
  Socket accept_one(std::chrono::milliseconds timeout, const std::string& waiting_for) const;
  // Connects to `to` from source address `from` (empty: any), retrying until the deadline.
  static Socket connect_to(const Endpoint& to, const std::string& from,
                           std::chrono::milliseconds timeout);

  void send_all(const void* data, size_t n, const std::string& peer) const;
  void recv_all(void* data, size_t n, const std::string& peer,
                std::chrono::milliseconds timeout) const;

 private:
  int fd_ = -1;
};

// The first IPv4 address of a netdev, or the text itself when it already is an address.
std::string rail_address(const std::string& netdev_or_address);

}  // namespace railyard::rdma
