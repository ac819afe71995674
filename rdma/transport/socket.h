// Small TCP helpers: listening and connecting bound to a rail, and whole-buffer I/O with a
// deadline, so a peer that dies turns into an error naming it instead of a hang.
//
// A rail socket is bound to the rail's address AND to the netdev that holds it (SO_BINDTODEVICE):
// the kernel then routes it only through that NIC, whatever the node's other routes say (a
// management default route would otherwise carry a dead rail's SYNs), and a listener takes only
// what arrived on its NIC (a miswired cable under the kernel's default ARP settings delivers a
// rail's traffic to another NIC of the node). Every wait is bounded by the caller's timeout.
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
  Socket(Socket&& o) noexcept : fd_(o.fd_), netdev_(std::move(o.netdev_)) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Listens on host (port 0: any); the bound port is in local_port(). A host address is a rail:
  // the socket is bound to the netdev that holds it too.
  static Socket listen_on(const std::string& host, int port);
  int local_port() const;
  Socket accept_one(std::chrono::milliseconds timeout, const std::string& waiting_for) const;
  // Connects to `to` from source address `from` (empty: any, the management network), retrying
  // until the timeout; a `from` rail is bound to its netdev too. Non-blocking: dropped SYNs end
  // at the timeout, not after the kernel's two minutes of retries; a rail whose NIC is down fails
  // at once. Errors name `peer` ("rank 2 (rail 1)"; default: the endpoint), the NIC and address.
  static Socket connect_to(const Endpoint& to, const std::string& from,
                           std::chrono::milliseconds timeout, const std::string& peer = "");

  void send_all(const void* data, size_t n, const std::string& peer) const;
  // All `n` bytes within `timeout`, however the peer spreads them: a peer that trickles a byte
  // at a time cannot stretch one read past it.
  void recv_all(void* data, size_t n, const std::string& peer,
                std::chrono::milliseconds timeout) const;
  // The same, by a deadline shared with other reads (a message's length and its text); `budget`
  // is the time the whole exchange was given, for the error's words.
  void recv_all_until(void* data, size_t n, const std::string& peer,
                      std::chrono::steady_clock::time_point deadline,
                      std::chrono::milliseconds budget) const;
  // The connected peer's IPv4 address ("" when it has none).
  std::string peer_host() const;

 private:
  int fd_ = -1;
  std::string netdev_;  // a rail listener's NIC, for the errors of its waits
};

// The first IPv4 address of a netdev, or the text itself when it already is an address.
std::string rail_address(const std::string& netdev_or_address);

// The netdev that holds an IPv4 address, whether it is up, and whether its link has a carrier.
// Throws NetError when no interface of this network namespace has it.
struct RailNetdev {
  std::string name;
  bool up = false;       // IFF_UP: administratively up
  bool carrier = false;  // IFF_RUNNING: the kernel may say so up to a second after a link comes up
};
RailNetdev netdev_holding(const std::string& address);

}  // namespace railyard::rdma
