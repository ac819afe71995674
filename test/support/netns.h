// Network namespaces and veth pairs that a test creates and always removes. Veth ends are created
// directly inside their namespaces, so nothing is ever left in the host's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "net/ip.h"

namespace railyard::testing {

// Runs a shell command; throws with its output when it fails. Returns stdout.
std::string sh(const std::string& command);

class TestNetns {
 public:
  explicit TestNetns(const std::string& role);  // named "ry<pid>-<role>-<n>"
  ~TestNetns();
  TestNetns(const TestNetns&) = delete;
  TestNetns& operator=(const TestNetns&) = delete;
  const std::string& name() const { return name_; }
  std::string path() const { return "/var/run/netns/" + name_; }
  // `ip -n NAME <args>`, trailing spaces trimmed from every line.
  std::string ip(const std::string& args) const;

 private:
  std::string name_;
};

// A veth pair between two namespaces, both ends up, IPv6 DAD off on both.
void veth(const TestNetns& a, const std::string& a_name, const TestNetns& b,
          const std::string& b_name);

// UDP through namespaces. Sockets keep the namespace they were created in.
class UdpSocket {
 public:
  UdpSocket(const TestNetns& ns, const net::IpAddress& bind, int port);
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  void send_to(const net::IpAddress& dst, int port, const std::string& payload) const;
  // The payload and the sender's address, or nullopt when nothing came within the timeout.
  std::optional<std::pair<std::string, std::string>> receive(int timeout_ms) const;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Sends one datagram from `src` (an address in `from`) to `dst`; returns the index of the peer
// that received it, -1 for none. Only one datagram is sent, so whichever peer gets it is the
// path it took. Throws when `from` cannot send at all (no route).
int which_peer_receives(const TestNetns& from, const net::IpAddress& src,
                        const std::vector<const TestNetns*>& peers, const net::IpAddress& dst,
                        int port);

}  // namespace railyard::testing
