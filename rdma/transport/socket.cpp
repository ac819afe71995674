#include "rdma/transport/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

namespace railyard::rdma {
namespace {

sockaddr_in address_of(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (host.empty())
    a.sin_addr.s_addr = htonl(INADDR_ANY);
  else if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw NetError("'" + host + "' is not an IPv4 address");
  return a;
}

// A host name (MASTER_ADDR is often one: a pod's DNS name) or an IPv4 literal. Empty when it
// does not resolve yet: a pod's record appears only once the pod has an address.
std::optional<sockaddr_in> resolve(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) == 1) return a;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return std::nullopt;
  a.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return a;
}

// Connection settings, and a backstop for a link that stops moving: the kernel drops a connection
// whose data stays unacknowledged this long, so even a blocking send ends (the links' own waits
// are bounded by the timeout; queues on a slow rail must not trip this one, hence twice that).
void tune(int fd, std::chrono::milliseconds timeout) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int buf = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  const unsigned user_timeout =
      static_cast<unsigned>(std::max<int64_t>(2 * timeout.count(), 10000));
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
}

std::string seconds(std::chrono::milliseconds t) {
  return std::to_string(t.count() / 1000) + " s";
}

// Ties a socket to the rail that holds `address`: its netdev, then the address. Kernels before
// 5.7 let only CAP_NET_RAW bind to a device; there the address alone binds it, with a warning.
RailNetdev bind_to_rail(int fd, const std::string& address, int port) {
  RailNetdev dev = netdev_holding(address);
  if (::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev.name.c_str(),
                   static_cast<socklen_t>(dev.name.size())) != 0) {
    if (errno != EPERM)
      throw NetError("cannot bind a socket to " + dev.name + " (" + address +
                     "): " + std::strerror(errno));
    static bool warned = false;
    if (!warned)
      std::fprintf(stderr,
                   "warning: no permission to bind sockets to a NIC (SO_BINDTODEVICE needs "
                   "CAP_NET_RAW before Linux 5.7): rail traffic is bound to its address only\n");
    warned = true;
  }
  sockaddr_in a = address_of(address, port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw NetError("cannot bind to " + address + ":" + std::to_string(port) + " on " + dev.name +
                   ": " + std::strerror(errno));
  return dev;
}

}  // namespace

Endpoint Endpoint::parse(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw NetError("'" + text + "' is not HOST:PORT");
  Endpoint e{text.substr(0, colon), 0};
  try {
    e.port = std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
    throw NetError("'" + text + "' is not HOST:PORT");
  }
  if (e.port <= 0 || e.port > 65535) throw NetError("'" + text + "': port out of range");
  return e;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    netdev_ = std::move(o.netdev_);
    o.fd_ = -1;
  }
  return *this;
}

Socket Socket::listen_on(const std::string& host, int port) {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  ::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (host.empty()) {
    sockaddr_in a = address_of(host, port);
    if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw NetError("cannot listen on port " + std::to_string(port) + ": " + std::strerror(errno));
  } else {
    s.netdev_ = bind_to_rail(s.fd_, host, port).name;
  }
  if (::listen(s.fd_, 128) != 0)
    throw NetError("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                   std::strerror(errno));
  return s;
}

int Socket::local_port() const {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

Socket Socket::accept_one(std::chrono::milliseconds timeout, const std::string& waiting_for) const {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0)
    throw NetError("timed out after " + seconds(timeout) + " waiting for " + waiting_for +
                   (netdev_.empty() ? "" : " on " + netdev_));
  Socket s(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC));
  if (!s.valid()) throw NetError(std::string("accept: ") + std::strerror(errno));
  tune(s.fd_, timeout);
  return s;
}

namespace {

// One non-blocking connect, waited for until `deadline`: 0 once connected, else the errno
// (ETIMEDOUT when the deadline came first: SYNs dropped, or nobody answering ARP).
int connect_once(int fd, const sockaddr_in& to, std::chrono::steady_clock::time_point deadline) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return ETIMEDOUT;
    pollfd p{fd, POLLOUT, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r == 0) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    return err;
  }
}

}  // namespace

Socket Socket::connect_to(const Endpoint& to, const std::string& from,
                          std::chrono::milliseconds timeout, const std::string& peer) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string who = peer.empty() ? to.to_string() : peer + " at " + to.to_string();
  for (int attempt = 0;; ++attempt) {
    const auto dst = resolve(to.host, to.port);
    if (!dst) {
      if (std::chrono::steady_clock::now() >= deadline)
        throw NetError("cannot resolve " + to.host + " (" + who + ")");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    std::string via;
    if (!from.empty()) {
      const RailNetdev dev = bind_to_rail(s.fd_, from, 0);
      via = " from " + dev.name + " (" + from + ")";
      if (!dev.up)  // its routes are gone: nothing can leave by this rail
        throw NetError("cannot reach " + who + via + ": " + dev.name + " is down");
      // No carrier may be a link still coming up (a pod's rail a moment after CNI ADD): tried
      // until the deadline like any peer that does not answer yet.
    }
    const int err = connect_once(s.fd_, *dst, deadline);
    if (err == 0) {
      const int flags = ::fcntl(s.fd_, F_GETFL);
      ::fcntl(s.fd_, F_SETFL, flags & ~O_NONBLOCK);
      tune(s.fd_, timeout);
      return s;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string why = err == ETIMEDOUT
                            ? "no answer within " + seconds(timeout) +
                                  " (SYNs dropped, or the peer unreachable on this rail)"
                            : std::strerror(err);
      if (!from.empty())
        if (const RailNetdev dev = netdev_holding(from); !dev.carrier)
          why += "; " + dev.name + " has no link (no carrier)";
      throw NetError("cannot connect to " + who + via + ": " + why);
    }
    // The peer may not listen yet, or its address not be resolved over ARP: back off (bounded)
    // and retry until the deadline.
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min(200, 5 << std::min(attempt, 5))));
  }
}

void Socket::send_all(const void* data, size_t n, const std::string& peer) const {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw NetError("lost " + peer + " while sending: " + std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
  }
}

void Socket::recv_all(void* data, size_t n, const std::string& peer,
                      std::chrono::milliseconds timeout) const {
  recv_all_until(data, n, peer, std::chrono::steady_clock::now() + timeout, timeout);
}

void Socket::recv_all_until(void* data, size_t n, const std::string& peer,
                            std::chrono::steady_clock::time_point deadline,
                            std::chrono::milliseconds budget) const {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd pf{fd_, POLLIN, 0};
    const int r = left.count() > 0 ? ::poll(&pf, 1, static_cast<int>(left.count())) : 0;
    if (r == 0) throw NetError("timed out after " + seconds(budget) + " waiting for " + peer);
    if (r < 0 && errno == EINTR) continue;
    const ssize_t k = ::recv(fd_, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) throw NetError(peer + " closed the connection (did it die?)");
    if (k < 0) throw NetError("lost " + peer + ": " + std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
  }
}

std::string Socket::peer_host() const {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0 || a.sin_family != AF_INET)
    return "";
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return text;
}

namespace {

// This namespace's IPv4 addresses in the kernel's order, with their netdevs: the first match.
struct Ipv4Address {
  std::string netdev, address;
  unsigned flags = 0;
};
template <class Match>
std::optional<Ipv4Address> first_ipv4(Match match) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) throw NetError("getifaddrs failed");
  std::optional<Ipv4Address> found;
  for (ifaddrs* i = list; i && !found; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    Ipv4Address a{i->ifa_name, buf, i->ifa_flags};
    if (match(a)) found = std::move(a);
  }
  ::freeifaddrs(list);
  return found;
}

}  // namespace

RailNetdev netdev_holding(const std::string& address) {
  const auto a = first_ipv4([&](const Ipv4Address& x) { return x.address == address; });
  if (!a) throw NetError("no interface here has the rail address " + address);
  return {a->netdev, (a->flags & IFF_UP) != 0, (a->flags & IFF_RUNNING) != 0};
}

std::string rail_address(const std::string& name) {
  in_addr tmp{};
  if (::inet_pton(AF_INET, name.c_str(), &tmp) == 1) return name;
  const auto a = first_ipv4([&](const Ipv4Address& x) { return x.netdev == name; });
  if (!a)
    throw NetError("rail '" + name + "' is neither an IPv4 address nor an interface with one");
  return a->address;
}

}  // namespace railyard::rdma
