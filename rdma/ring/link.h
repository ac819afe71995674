// One rail of the ring as a rank sees it: a way to send to the next rank and, at the same time,
// receive from the previous one. TCP (transport/tcp_link.h) and verbs RC (transport/verbs_link.h)
// implement it; the ring algorithm (ring.h) is written once, over it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>

#include "rdma/ring/interrupt.h"

namespace railyard::rdma {

class RingLink {
 public:
  virtual ~RingLink() = default;

  // Called once for each run of received bytes, in no particular order (a link may receive
  // over several connections at once): where in the message it belongs, where it is now (the
  // landing area, or the transport's staging memory) and how long it is (whole granules, except
  // where the message ends). The caller reduces or copies it before returning: the transport
  // may reuse the memory afterwards.
  using Sink = std::function<void(size_t offset, const char* data, size_t bytes)>;

  // Sends out[0, out_bytes) to the next rank while receiving in_bytes from the previous one.
  // `landing` (in_bytes of data memory, or null) is where a transport may receive in place.
  // Returns when everything is sent and received; throws NetError naming the peer otherwise.
  virtual void exchange(const char* out, size_t out_bytes, char* landing, size_t in_bytes,
                        size_t granule, const Sink& sink) = 0;

  // perftest's stream: sends the same `bytes` from `out` `out_count` times while receiving
  // `in_count` messages of `bytes` (sink offsets are within each message). Verbs keeps writes in
  // flight across messages; by default, one exchange per message.
  virtual void stream(const char* out, size_t out_count, char* landing, size_t in_count,
                      size_t bytes, const Sink& sink) {
    for (size_t i = 0; i < std::max(out_count, in_count); ++i)
      exchange(i < out_count ? out : nullptr, i < out_count ? bytes : 0,
               i < in_count ? landing : nullptr, i < in_count ? bytes : 0, 1, sink);
  }

  // Data memory the exchanges will send from and land in (verbs registers it); cached, so
  // calling it every iteration for the same buffer costs nothing.
  virtual void prepare(void* /*base*/, size_t /*bytes*/) {}

  // "tcp 10.0.0.1", "verbs mlx5_0:1 gid 3 (RoCE v2) mtu 4096, dma-buf": for the run's header.
  virtual std::string describe() const = 0;

  // This rank gives up with `why` (the error the ring reports): a link that can still reach its
  // neighbours outside the data path tells them (give_up_note.h), so they name the cause rather
  // than this rank, which only gave up on it. Best effort, never blocks; by default nothing.
  virtual void tell_neighbours(const std::string& /*why*/) noexcept {}

  // Another rail of the same collective failed: the exchange under way (or the next one) stops
  // waiting and throws kInterrupted. From any thread; lasting, as the run is over.
  void interrupt() noexcept { interrupt_.raise(); }
  static constexpr const char* kInterrupted = "stopped: another rail failed first";

 protected:
  // Where an implementation's poll() watches for interrupt().
  int interrupt_fd() const { return interrupt_.fd(); }

 private:
  Interrupt interrupt_;
};

}  // namespace railyard::rdma
