#include "rdma/run/p2p.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
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

constexpr size_t kCtrl = 64;  // [0, 8): outgoing, [32, 40): incoming

}  // namespace

LinkPair::LinkPair(int rank, std::vector<std::unique_ptr<RingLink>> links, Memory& memory,
                   size_t max_bytes)
    : rank_(rank),
      links_(std::move(links)),
      memory_(memory),
      out_(memory, std::max<size_t>(max_bytes, 1)),
      in_(memory, std::max<size_t>(max_bytes, 1)),
      ctrl_(memory, kCtrl) {
  pattern_.resize(out_.size());
  for (size_t i = 0; i < pattern_.size(); ++i) pattern_[i] = pattern(i);
  memory_.copy(out_.data(), pattern_.data(), pattern_.size());
  for (auto& l : links_) {
    l->prepare(out_.data(), out_.size());
    l->prepare(in_.data(), in_.size());
    l->prepare(ctrl_.data(), kCtrl);
  }
}

P2pResult LinkPair::measure(size_t rail, size_t bytes, int iters, int warmup, bool check) {
  RingLink& l = *links_.at(rail);
  const bool zero = rank_ == 0;
  P2pResult r;
  const RingLink::Sink ignore = [](size_t, const char*, size_t) {};
  // Received bytes against the pattern (copied to the host first when they are in GPU memory).
  const RingLink::Sink checker = [&](size_t off, const char* data, size_t n) {
    if (!check) return;
    const char* p = data;
    if (memory_.on_device()) {
      host_.resize(n);
      memory_.copy(host_.data(), data, n);
      p = host_.data();
    }
    for (size_t i = 0; i < n; ++i) r.wrong += p[i] != pattern_[off + i];
  };
  char* ctrl_out = ctrl_.data();
  char* ctrl_in = ctrl_.data() + 32;
  auto sync = [&] { l.exchange(ctrl_out, 1, ctrl_in, 1, 1, ignore); };
  auto token_out = [&] { l.exchange(ctrl_out, 1, nullptr, 0, 1, ignore); };
  auto token_in = [&] { l.exchange(nullptr, 0, ctrl_in, 1, 1, ignore); };
  const auto count = [](int n) { return static_cast<size_t>(std::max(n, 0)); };
  auto send = [&](int n) { l.stream(out_.data(), count(n), nullptr, 0, bytes, ignore); };
  auto recv = [&](int n) { l.stream(nullptr, 0, in_.data(), count(n), bytes, checker); };
  const double volume = static_cast<double>(bytes) * iters;

  // 0 -> 1: rank 0 streams; rank 1 acknowledges the last message.
  sync();
  if (zero) {
    send(warmup);
    token_in();
    const auto t0 = Clock::now();
    send(iters);
    token_in();
    r.gbps_0to1 = volume / seconds_since(t0) / 1e9;
  } else {
    recv(warmup);
    token_out();
    recv(iters);
    token_out();
  }
  // 1 -> 0: rank 0 starts the clock when it asks for the stream.
  sync();
  if (zero) {
    recv(warmup);
    const auto t0 = Clock::now();
    token_out();
    recv(iters);
    r.gbps_1to0 = volume / seconds_since(t0) / 1e9;
  } else {
    send(warmup);
    token_in();
    send(iters);
  }
  // Both directions at once.
  sync();
  {
    const auto t0 = Clock::now();
    l.stream(out_.data(), count(iters), in_.data(), count(iters), bytes, checker);
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
        send(1);
        recv(1);
      } else {
        recv(1);
        send(1);
      }
    }
    if (zero) r.latency_us = seconds_since(t0) / n / 2 * 1e6;
  }
  // Rank 1's count of wrong bytes reaches rank 0.
  uint64_t peer_wrong = r.wrong;
  if (zero) {
    l.exchange(nullptr, 0, ctrl_in, sizeof peer_wrong, 1, ignore);
    memory_.copy(&peer_wrong, ctrl_in, sizeof peer_wrong);
    r.wrong += peer_wrong;
  } else {
    memory_.copy(ctrl_out, &peer_wrong, sizeof peer_wrong);
    l.exchange(ctrl_out, sizeof peer_wrong, nullptr, 0, 1, ignore);
  }
  return r;
}

}  // namespace railyard::rdma
