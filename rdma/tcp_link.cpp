#include "rdma/tcp_link.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace railyard::rdma {
namespace {

// Staged pieces: large enough that a send() call moves a lot, small enough to stay in cache.
constexpr size_t kStage = 1u << 20;

}  // namespace

TcpLink::TcpLink(Socket next, Socket prev, Memory& memory, std::string next_name,
                 std::string prev_name, std::string address, std::chrono::milliseconds timeout)
    : next_(std::move(next)),
      prev_(std::move(prev)),
      memory_(memory),
      next_name_(std::move(next_name)),
      prev_name_(std::move(prev_name)),
      address_(std::move(address)),
      timeout_(timeout) {
  stage_out_ = static_cast<char*>(memory_.alloc_staging(kStage));
  stage_in_ = static_cast<char*>(memory_.alloc_staging(kStage));
}

TcpLink::~TcpLink() {
  memory_.release_staging(stage_out_, kStage);
  memory_.release_staging(stage_in_, kStage);
}

std::string TcpLink::describe() const {
  return "tcp " + address_ + (memory_.on_device() ? ", staged through pinned host memory" : "");
}

void TcpLink::exchange(const char* out, size_t out_bytes, char* landing, size_t in_bytes,
                       size_t granule, const Sink& sink) {
  const bool staged_out = memory_.on_device();
  const bool direct_in = landing && !memory_.on_device();
  // Send side: [piece, piece + piece_len) is what is being sent now, `sent_piece` of it gone.
  size_t sent = 0, sent_piece = 0, piece_len = 0;
  const char* piece = out;
  auto next_piece = [&] {
    piece_len = staged_out ? std::min(kStage, out_bytes - sent) : out_bytes;
    if (staged_out) {
      memory_.copy(stage_out_, out + sent, piece_len);
      piece = stage_out_;
    }
    sent_piece = 0;
  };
  if (out_bytes) next_piece();
  // Receive side: direct into landing, or through stage_in_, whose contents start at `stage_at`.
  size_t got = 0, delivered = 0, stage_at = 0;

  while (sent < out_bytes || got < in_bytes) {
    pollfd fds[2] = {{next_.fd(), static_cast<short>(sent < out_bytes ? POLLOUT : 0), 0},
                     {prev_.fd(), static_cast<short>(got < in_bytes ? POLLIN : 0), 0}};
    const int r = ::poll(fds, 2, static_cast<int>(timeout_.count()));
    if (r == 0)
      throw NetError("timed out after " + std::to_string(timeout_.count() / 1000) +
                     " s waiting for " + (got < in_bytes ? prev_name_ : next_name_));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw NetError(std::string("poll: ") + std::strerror(errno));
    }
    if (sent < out_bytes && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t k = ::send(next_.fd(), piece + sent_piece, piece_len - sent_piece,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k < 0 && errno != EAGAIN && errno != EINTR)
        throw NetError("lost " + next_name_ + ": " + std::strerror(errno));
      if (k > 0) {
        sent += static_cast<size_t>(k);
        sent_piece += static_cast<size_t>(k);
        if (sent_piece == piece_len && sent < out_bytes) next_piece();
      }
    }
    if (got < in_bytes && (fds[1].revents & (POLLIN | POLLERR | POLLHUP))) {
      char* into = direct_in ? landing + got : stage_in_ + (got - stage_at);
      const size_t room =
          direct_in ? in_bytes - got : std::min(kStage - (got - stage_at), in_bytes - got);
      const ssize_t k = ::recv(prev_.fd(), into, room, MSG_DONTWAIT);
      if (k == 0) throw NetError(prev_name_ + " closed the connection (did it die?)");
      if (k < 0 && errno != EAGAIN && errno != EINTR)
        throw NetError("lost " + prev_name_ + ": " + std::strerror(errno));
      if (k <= 0) continue;
      got += static_cast<size_t>(k);
      // Hand over whole granules as they arrive (everything, once the message is complete).
      const size_t ready = got == in_bytes ? got : got / granule * granule;
      if (ready > delivered) {
        sink(delivered, direct_in ? landing + delivered : stage_in_ + (delivered - stage_at),
             ready - delivered);
        delivered = ready;
      }
      if (!direct_in) {  // keep only the partial granule, if any, at the front of the stage
        std::memmove(stage_in_, stage_in_ + (delivered - stage_at), got - delivered);
        stage_at = delivered;
      }
    }
  }
}

}  // namespace railyard::rdma
