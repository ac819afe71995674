#include "test/support/netns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "net/netns.h"
#include "test/support/run.h"

namespace railyard::testing {

std::string sh(const std::string& command) {
  RunResult r = run({"/bin/sh", "-c", command});
  if (r.exit_code != 0)
    throw std::runtime_error("command failed (" + std::to_string(r.exit_code) + "): " + command +
                             "\n" + r.out + r.err);
  return r.out;
}

namespace {
std::atomic<int> counter{0};

std::string trim_lines(const std::string& text) {
  std::stringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}
}  // namespace

TestNetns::TestNetns(const std::string& role)
    : name_("ry" + std::to_string(::getpid()) + "-" + role + "-" + std::to_string(counter++)) {
  sh("ip netns add " + name_);
  sh("ip -n " + name_ + " link set lo up");
}

TestNetns::~TestNetns() {
  RunResult r = run({"ip", "netns", "del", name_});
  (void)r;  // best effort: a destructor must not throw
}

std::string TestNetns::ip(const std::string& args) const {
  return trim_lines(sh("ip -n " + name_ + " " + args));
}

void veth(const TestNetns& a, const std::string& a_name, const TestNetns& b,
          const std::string& b_name) {
  sh("ip link add " + a_name + " netns " + a.name() + " type veth peer name " + b_name + " netns " +
     b.name());
  for (const auto* ns : {&a, &b}) {
    const std::string& ifname = ns == &a ? a_name : b_name;
    sh("ip netns exec " + ns->name() + " sysctl -qw net.ipv6.conf." + ifname + ".accept_dad=0");
    sh("ip -n " + ns->name() + " link set " + ifname + " up");
  }
}

namespace {
sockaddr_storage sockaddr_of(const net::IpAddress& a, int port, socklen_t& len) {
  sockaddr_storage ss{};
  if (a.is_v4()) {
    auto* s = reinterpret_cast<sockaddr_in*>(&ss);
    s->sin_family = AF_INET;
    s->sin_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&s->sin_addr, a.bytes.data(), 4);
    len = sizeof(sockaddr_in);
  } else {
    auto* s = reinterpret_cast<sockaddr_in6*>(&ss);
    s->sin6_family = AF_INET6;
    s->sin6_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&s->sin6_addr, a.bytes.data(), 16);
    len = sizeof(sockaddr_in6);
  }
  return ss;
}
}  // namespace

UdpSocket::UdpSocket(const TestNetns& ns, const net::IpAddress& bind, int port) : fd_(-1) {
  net::run_in_netns(ns.path(), [&] {
    fd_ = ::socket(bind.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    socklen_t len;
    sockaddr_storage ss = sockaddr_of(bind, port, len);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0)
      throw std::runtime_error("bind " + bind.to_string() + ": " + std::strerror(errno));
  });
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

void UdpSocket::send_to(const net::IpAddress& dst, int port, const std::string& payload) const {
  socklen_t len;
  sockaddr_storage ss = sockaddr_of(dst, port, len);
  if (::sendto(fd_, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&ss), len) < 0)
    throw std::runtime_error("sendto " + dst.to_string() + ": " + std::strerror(errno));
}

std::optional<std::pair<std::string, std::string>> UdpSocket::receive(int timeout_ms) const {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
  char buf[2048];
  sockaddr_storage from{};
  socklen_t len = sizeof from;
  ssize_t n = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
  if (n < 0) return std::nullopt;
  char addr[INET6_ADDRSTRLEN] = {};
  if (from.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&from)->sin_addr, addr, sizeof addr);
  else
    ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&from)->sin6_addr, addr, sizeof addr);
  return std::make_pair(std::string(buf, static_cast<size_t>(n)), std::string(addr));
}

int which_peer_receives(const TestNetns& from, const net::IpAddress& src,
                        const std::vector<const TestNetns*>& peers, const net::IpAddress& dst,
                        int port) {
  std::vector<std::unique_ptr<UdpSocket>> listeners;
  for (const TestNetns* p : peers)
    listeners.push_back(std::make_unique<UdpSocket>(*p, net::IpAddress::any(dst.family), port));
  UdpSocket sender(from, src, 0);
  sender.send_to(dst, port, "hello from " + src.to_string());
  // Wait on all of them at once; the first that has it wins.
  std::vector<pollfd> fds;
  for (const auto& l : listeners) fds.push_back(pollfd{l->fd(), POLLIN, 0});
  if (::poll(fds.data(), fds.size(), 3000) <= 0) return -1;
  for (size_t i = 0; i < fds.size(); ++i)
    if (fds[i].revents & POLLIN) return static_cast<int>(i);
  return -1;
}

}  // namespace railyard::testing
