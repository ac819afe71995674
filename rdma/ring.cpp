#include "rdma/ring.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

namespace railyard::rdma {
namespace {

// One ring step: send `out` to next while receiving `in_bytes` from prev into `in`; when `acc` is
// set, reduce the received elements into it as they arrive.
void step(int next_fd, int prev_fd, const char* out, size_t out_bytes, char* in, size_t in_bytes,
          char* acc, DType t, const std::string& next_name, const std::string& prev_name,
          std::chrono::milliseconds timeout) {
  size_t sent = 0, got = 0, reduced = 0;
  const size_t es = elem_size(t);
  while (sent < out_bytes || got < in_bytes) {
    pollfd fds[2] = {{next_fd, static_cast<short>(sent < out_bytes ? POLLOUT : 0), 0},
                     {prev_fd, static_cast<short>(got < in_bytes ? POLLIN : 0), 0}};
    const int r = ::poll(fds, 2, static_cast<int>(timeout.count()));
    if (r == 0)
      throw NetError("timed out after " + std::to_string(timeout.count() / 1000) +
                     " s waiting for " + prev_name);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw NetError(std::string("poll: ") + std::strerror(errno));
    }
    if (sent < out_bytes && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t k = ::send(next_fd, out + sent, out_bytes - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k < 0 && errno != EAGAIN && errno != EINTR)
        throw NetError("lost " + next_name + ": " + std::strerror(errno));
      if (k > 0) sent += static_cast<size_t>(k);
    }
    if (got < in_bytes && (fds[1].revents & (POLLIN | POLLERR | POLLHUP))) {
      const ssize_t k = ::recv(prev_fd, in + got, in_bytes - got, MSG_DONTWAIT);
      if (k == 0) throw NetError(prev_name + " closed the connection (did it die?)");
      if (k < 0 && errno != EAGAIN && errno != EINTR)
        throw NetError("lost " + prev_name + ": " + std::strerror(errno));
      if (k > 0) got += static_cast<size_t>(k);
      if (acc) {
        const size_t ready = got / es * es;
        reduce_sum(acc + reduced, in + reduced, (ready - reduced) / es, t);
        reduced = ready;
      }
    }
  }
}

}  // namespace

TcpRing::TcpRing(int rank, int world, const std::vector<std::string>& rail_addresses,
                 std::vector<Socket> listeners, const Table& table,
                 std::chrono::milliseconds timeout)
    : rank_(rank), world_(world), timeout_(timeout) {
  if (world == 1) return;
  const int next = (rank + 1) % world, prev = (rank + world - 1) % world;
  for (size_t k = 0; k < rail_addresses.size(); ++k) {
    next_.push_back(
        Socket::connect_to(table[static_cast<size_t>(next)][k], rail_addresses[k], timeout));
    prev_.push_back(listeners[k].accept_one(
        timeout, "rank " + std::to_string(prev) + " on rail " + std::to_string(k)));
  }
}

std::vector<double> TcpRing::allreduce(void* data, size_t count, DType type) {
  const size_t rails = std::max<size_t>(next_.size(), 1);
  std::vector<double> seconds(rails, 0.0);
  if (world_ == 1) return seconds;
  const size_t es = elem_size(type);
  const int n = world_;
  std::vector<std::exception_ptr> errors(rails);
  scratch_.resize(rails);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < rails; ++k) {
    threads.emplace_back([&, k] {
      try {
        const auto t0 = std::chrono::steady_clock::now();
        const size_t begin = count * k / rails, end = count * (k + 1) / rails;  // this rail's slice
        char* base = static_cast<char*>(data) + begin * es;
        const size_t len = end - begin;
        auto chunk_begin = [&](int c) {
          return len * static_cast<size_t>(c) / static_cast<size_t>(n);
        };
        auto chunk_len = [&](int c) { return chunk_begin(c + 1) - chunk_begin(c); };
        std::vector<char>& tmp = scratch_[k];
        if (tmp.size() < (len / static_cast<size_t>(n) + 1) * es)
          tmp.resize((len / static_cast<size_t>(n) + 1) * es);
        const std::string next_name =
            "rank " + std::to_string((rank_ + 1) % n) + " (rail " + std::to_string(k) + ")";
        const std::string prev_name =
            "rank " + std::to_string((rank_ + n - 1) % n) + " (rail " + std::to_string(k) + ")";
        const int nfd = next_[k].fd(), pfd = prev_[k].fd();
        for (int s = 0; s < n - 1; ++s) {  // reduce-scatter
          const int send_c = (rank_ - s + n) % n, recv_c = (rank_ - s - 1 + n) % n;
          step(nfd, pfd, base + chunk_begin(send_c) * es, chunk_len(send_c) * es, tmp.data(),
               chunk_len(recv_c) * es, base + chunk_begin(recv_c) * es, type, next_name, prev_name,
               timeout_);
        }
        for (int s = 0; s < n - 1; ++s) {  // all-gather
          const int send_c = (rank_ + 1 - s + n) % n, recv_c = (rank_ - s + n) % n;
          step(nfd, pfd, base + chunk_begin(send_c) * es, chunk_len(send_c) * es,
               base + chunk_begin(recv_c) * es, chunk_len(recv_c) * es, nullptr, type, next_name,
               prev_name, timeout_);
        }
        seconds[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return seconds;
}

}  // namespace railyard::rdma
