#include "rdma/p2p.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace railyard::rdma {
namespace {

using Clock = std::chrono::steady_clock;

// Byte i of every message: a pattern that a shifted or torn stream cannot match. The same for
// every message, so that the sender's buffer is filled once and timing measures the link.
char pattern(size_t i) {
  return static_cast<char>(i * 131u + 1u);
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

TcpPair::TcpPair(int rank, const std::vector<std::string>& rail_addresses,
                 std::vector<Socket> listeners, const Table& table,
                 std::chrono::milliseconds timeout)
    : rank_(rank), timeout_(timeout) {
  if (table.size() != 2) throw NetError("p2p runs between exactly 2 ranks");
  for (size_t k = 0; k < rail_addresses.size(); ++k)
    links_.push_back(rank == 0
                         ? Socket::connect_to(table[1][k], rail_addresses[k], timeout)
                         : listeners[k].accept_one(timeout, "rank 0 on rail " + std::to_string(k)));
}

void TcpPair::send_stream(const Socket& s, size_t bytes, int iters, const std::string& peer) {
  for (int it = 0; it < iters; ++it) s.send_all(out_.data(), bytes, peer);
}

size_t TcpPair::recv_stream(const Socket& s, size_t bytes, int iters, bool check,
                            const std::string& peer) {
  size_t wrong = 0;
  for (int it = 0; it < iters; ++it) {
    s.recv_all(in_.data(), bytes, peer, timeout_);
    if (check)
      for (size_t i = 0; i < bytes; ++i) wrong += in_[i] != pattern(i);
  }
  return wrong;
}

// Sends `iters` messages while receiving as many: one poll loop, both directions in flight.
size_t TcpPair::duplex(const Socket& s, size_t bytes, int iters, bool check,
                       const std::string& peer) {
  const size_t total = bytes * static_cast<size_t>(iters);
  size_t sent = 0, got = 0, wrong = 0;
  while (sent < total || got < total) {
    pollfd pf{s.fd(), static_cast<short>((sent < total ? POLLOUT : 0) | (got < total ? POLLIN : 0)),
              0};
    const int r = ::poll(&pf, 1, static_cast<int>(timeout_.count()));
    if (r == 0) throw NetError("timed out waiting for " + peer);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw NetError(std::string("poll: ") + std::strerror(errno));
    }
    if (sent < total && (pf.revents & (POLLOUT | POLLERR | POLLHUP))) {
      const size_t off = sent % bytes;
      const ssize_t k = ::send(s.fd(), out_.data() + off, bytes - off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k < 0 && errno != EAGAIN && errno != EINTR)
        throw NetError("lost " + peer + ": " + std::strerror(errno));
      if (k > 0) sent += static_cast<size_t>(k);
    }
    if (got < total && (pf.revents & (POLLIN | POLLERR | POLLHUP))) {
      const size_t off = got % bytes;
      const ssize_t k = ::recv(s.fd(), in_.data() + off, bytes - off, MSG_DONTWAIT);
      if (k == 0) throw NetError(peer + " closed the connection (did it die?)");
      if (k < 0 && errno != EAGAIN && errno != EINTR)
        throw NetError("lost " + peer + ": " + std::strerror(errno));
      if (k > 0) {
        if (check)
          for (size_t i = off; i < off + static_cast<size_t>(k); ++i) wrong += in_[i] != pattern(i);
        got += static_cast<size_t>(k);
      }
    }
  }
  return wrong;
}

P2pResult TcpPair::measure(size_t rail, size_t bytes, int iters, int warmup, bool check) {
  const Socket& s = links_.at(rail);
  const std::string peer =
      "rank " + std::to_string(1 - rank_) + " (rail " + std::to_string(rail) + ")";
  if (out_.size() != bytes) {
    out_.resize(bytes);
    in_.resize(bytes);
    for (size_t i = 0; i < bytes; ++i) out_[i] = pattern(i);
  }
  const bool zero = rank_ == 0;
  char token = 1;
  auto sync = [&] {  // both sides at the same point: rank 0 asks, rank 1 answers
    if (zero) {
      s.send_all(&token, 1, peer);
      s.recv_all(&token, 1, peer, timeout_);
    } else {
      s.recv_all(&token, 1, peer, timeout_);
      s.send_all(&token, 1, peer);
    }
  };
  P2pResult r;
  uint64_t peer_wrong = 0;
  const double volume = static_cast<double>(bytes) * iters;

  // 0 -> 1: rank 0 streams, rank 1 acknowledges the last byte.
  sync();
  if (zero) {
    send_stream(s, bytes, warmup, peer);
    s.recv_all(&token, 1, peer, timeout_);
    const auto t0 = Clock::now();
    send_stream(s, bytes, iters, peer);
    s.recv_all(&token, 1, peer, timeout_);
    r.gbps_0to1 = volume / seconds_since(t0) / 1e9;
  } else {
    r.wrong += recv_stream(s, bytes, warmup, check, peer);
    s.send_all(&token, 1, peer);
    r.wrong += recv_stream(s, bytes, iters, check, peer);
    s.send_all(&token, 1, peer);
  }
  // 1 -> 0: rank 0 starts the clock when it asks for the stream.
  sync();
  if (zero) {
    r.wrong += recv_stream(s, bytes, warmup, check, peer);
    const auto t0 = Clock::now();
    s.send_all(&token, 1, peer);
    r.wrong += recv_stream(s, bytes, iters, check, peer);
    r.gbps_1to0 = volume / seconds_since(t0) / 1e9;
  } else {
    send_stream(s, bytes, warmup, peer);
    s.recv_all(&token, 1, peer, timeout_);
    send_stream(s, bytes, iters, peer);
  }
  // Both directions at once.
  sync();
  {
    const auto t0 = Clock::now();
    r.wrong += duplex(s, bytes, iters, check, peer);
    sync();
    if (zero) r.gbps_both = 2 * volume / seconds_since(t0) / 1e9;
  }
  // Latency: ping-pong of one message.
  sync();
  {
    const int n = std::max(iters, 1);
    const auto t0 = Clock::now();
    for (int it = 0; it < n; ++it) {
      if (zero) {
        s.send_all(out_.data(), bytes, peer);
        s.recv_all(in_.data(), bytes, peer, timeout_);
      } else {
        s.recv_all(in_.data(), bytes, peer, timeout_);
        s.send_all(out_.data(), bytes, peer);
      }
    }
    if (zero) r.latency_us = seconds_since(t0) / n / 2 * 1e6;
  }
  // Rank 1's count of wrong bytes reaches rank 0.
  if (zero) {
    s.recv_all(&peer_wrong, sizeof peer_wrong, peer, timeout_);
    r.wrong += peer_wrong;
  } else {
    peer_wrong = r.wrong;
    s.send_all(&peer_wrong, sizeof peer_wrong, peer);
  }
  return r;
}

}  // namespace railyard::rdma
