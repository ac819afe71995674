#include "rdma/socket.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

namespace railyard::rdma {
namespace {

sockaddr_in address(const std::string& host, int port) {
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

void tune(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int buf = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
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
    o.fd_ = -1;
  }
  return *this;
}

Socket Socket::listen_on(const std::string& host, int port) {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  ::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a = address(host, port);
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s.fd_, 128) != 0)
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
    throw NetError("timed out after " + std::to_string(timeout.count() / 1000) + " s waiting for " +
                   waiting_for);
  Socket s(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC));
  if (!s.valid()) throw NetError(std::string("accept: ") + std::strerror(errno));
  tune(s.fd_);
  return s;
}

Socket Socket::connect_to(const Endpoint& to, const std::string& from,
                          std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int attempt = 0;; ++attempt) {
    const auto dst = resolve(to.host, to.port);
    if (!dst) {
      if (std::chrono::steady_clock::now() >= deadline)
        throw NetError("cannot resolve " + to.host + " (rendezvous " + to.to_string() + ")");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!from.empty()) {
      // Bound to the rail's address: source-based routing then keeps it on the rail.
      sockaddr_in src = address(from, 0);
      if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0)
        throw NetError("cannot bind to " + from + ": " + std::strerror(errno));
    }
    if (::connect(s.fd_, reinterpret_cast<const sockaddr*>(&*dst), sizeof *dst) == 0) {
      tune(s.fd_);
      return s;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw NetError("cannot connect to " + to.to_string() + ": " + std::strerror(errno));
    // The peer may not listen yet: back off (bounded) and retry until the deadline.
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
  char* p = static_cast<char*>(data);
  while (n > 0) {
    pollfd pf{fd_, POLLIN, 0};
    const int r = ::poll(&pf, 1, static_cast<int>(timeout.count()));
    if (r == 0)
      throw NetError("timed out after " + std::to_string(timeout.count() / 1000) +
                     " s waiting for " + peer);
    if (r < 0 && errno == EINTR) continue;
    const ssize_t k = ::recv(fd_, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) throw NetError(peer + " closed the connection (did it die?)");
    if (k < 0) throw NetError("lost " + peer + ": " + std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
  }
}

std::string rail_address(const std::string& name) {
  in_addr tmp{};
  if (::inet_pton(AF_INET, name.c_str(), &tmp) == 1) return name;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) throw NetError("getifaddrs failed");
  std::string found;
  for (ifaddrs* i = list; i; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && name == i->ifa_name && found.empty()) {
      char buf[INET_ADDRSTRLEN];
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
      found = buf;
    }
  ::freeifaddrs(list);
  if (found.empty())
    throw NetError("rail '" + name + "' is neither an IPv4 address nor an interface with one");
  return found;
}

}  // namespace railyard::rdma
