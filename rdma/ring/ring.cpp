#include "rdma/ring/ring.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include "rdma/ring/schedule.h"

namespace railyard::rdma {

Ring::Ring(int rank, int world, std::vector<std::unique_ptr<RingLink>> links, Memory& memory)
    : rank_(rank), world_(world), links_(std::move(links)), memory_(memory) {}

void Ring::prepare(void* base, size_t bytes) {
  for (auto& l : links_) l->prepare(base, bytes);
}

// Out of place without a copy: the reduce-scatter sums the send buffer's chunk and what arrives
// into the receive buffer (recv = send + in), so every later step works on recv alone.
std::vector<double> Ring::allreduce(const void* send, void* recv, size_t count, DType type) {
  const size_t rails = std::max<size_t>(links_.size(), 1);
  std::vector<double> seconds(rails, 0.0);
  const size_t es = elem_size(type);
  if (world_ == 1 || links_.empty()) {
    memory_.copy(recv, send, count * es);
    return seconds;
  }
  std::vector<std::exception_ptr> errors(rails);
  // The rail that failed first names the cause; the others are stopped rather than waited for
  // (a dead neighbour is not always seen on every rail at once: one rail may sit out its timeout).
  std::atomic<int> first_failed{-1};
  std::vector<std::thread> threads;
  for (size_t k = 0; k < rails; ++k) {
    threads.emplace_back([&, k] {
      try {
        const auto t0 = std::chrono::steady_clock::now();
        const Span slice = rail_slice(count, rails, k);
        const char* src = static_cast<const char*>(send) + slice.begin * es;
        char* base = static_cast<char*>(recv) + slice.begin * es;
        RingLink& link = *links_[k];
        link.prepare(const_cast<char*>(src), slice.len * es);
        link.prepare(base, slice.len * es);
        bool first = true;
        for (const RingStep& s : ring_steps(rank_, world_)) {
          const Span out = ring_chunk(slice.len, world_, s.send_chunk);
          const Span in = ring_chunk(slice.len, world_, s.recv_chunk);
          char* dst = base + in.begin * es;
          const char* mine = src + in.begin * es;  // this rank's own contribution to the chunk
          // What is summed comes through the link's own staging (1 MiB for TCP), so no buffer
          // as large as a chunk is kept per rail; it measured no slower (bench/README.md). What
          // is copied lands in place.
          char* landing = s.reduce ? nullptr : dst;
          // Only the first step sends an unreduced chunk: this rank's own, from the send buffer.
          const char* from = (first ? src : base) + out.begin * es;
          first = false;
          link.exchange(from, out.len * es, landing, in.len * es, es,
                        [&](size_t offset, const char* d, size_t bytes) {
                          if (s.reduce)
                            memory_.reduce(dst + offset, mine + offset, d, bytes / es, type);
                          else
                            memory_.copy(dst + offset, d, bytes);
                        });
        }
        seconds[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } catch (...) {
        errors[k] = std::current_exception();
        int none = -1;
        if (first_failed.compare_exchange_strong(none, static_cast<int>(k)))
          for (size_t j = 0; j < rails; ++j)
            if (j != k) links_[j]->interrupt();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first_failed >= 0) {
    const std::exception_ptr first = errors[static_cast<size_t>(first_failed.load())];
    try {
      std::rethrow_exception(first);
    } catch (const std::exception& e) {
      for (auto& l : links_) l->tell_neighbours(e.what());
    } catch (...) {
    }
    std::rethrow_exception(first);
  }
  return seconds;
}

}  // namespace railyard::rdma
