#include "rdma/transport/tcp_link.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "rdma/ring/give_up_note.h"
#include "rdma/ring/schedule.h"

namespace railyard::rdma {
namespace {

// Staged pieces: large enough that a send() call moves a lot, small enough to stay in cache.
constexpr size_t kStage = 1u << 20;

// Part j of a message cut into `n` parts of whole granules (the last takes the remainder).
Span part(size_t bytes, size_t granule, size_t n, size_t j) {
  const Span e = ring_chunk(bytes / granule, static_cast<int>(n), static_cast<int>(j));
  const size_t begin = e.begin * granule;
  const size_t end = j + 1 == n ? bytes : e.end() * granule;
  return {begin, end - begin};
}

// One connection's share of an exchange.
struct Flow {
  // send: [piece, piece + piece_len) is going out now, piece_sent of it gone; `sent` in all
  Span out;
  size_t sent = 0, piece_sent = 0, piece_len = 0;
  const char* piece = nullptr;
  // receive: into landing, or through the stage, whose first byte is message byte stage_at
  Span in;
  size_t got = 0, delivered = 0, stage_at = 0;
};

// Why a connection failed ("Connection timed out": its user timeout, "Connection reset by peer").
std::string socket_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err == 0)
    return "connection closed";
  return std::strerror(err);
}

}  // namespace

TcpLink::TcpLink(std::vector<Socket> next, std::vector<Socket> prev, Memory& memory,
                 std::string next_name, std::string prev_name, std::string address,
                 std::chrono::milliseconds timeout)
    : memory_(memory),
      next_name_(std::move(next_name)),
      prev_name_(std::move(prev_name)),
      address_(std::move(address)),
      timeout_(timeout) {
  if (next.empty() || next.size() != prev.size())
    throw std::invalid_argument("TcpLink: as many connections to next as from prev, at least one");
  for (size_t j = 0; j < next.size(); ++j) {
    Stream s{std::move(next[j]), std::move(prev[j])};
    streams_.push_back(std::move(s));
    streams_.back().stage_out = static_cast<char*>(memory_.alloc_staging(kStage));
    streams_.back().stage_in = static_cast<char*>(memory_.alloc_staging(kStage));
  }
}

TcpLink::~TcpLink() {
  for (auto& s : streams_) {
    memory_.release_staging(s.stage_out, kStage);
    memory_.release_staging(s.stage_in, kStage);
  }
}

std::string TcpLink::describe() const {
  std::string s = "tcp " + address_;
  if (streams_.size() > 1) s += ", " + std::to_string(streams_.size()) + " connections";
  if (memory_.on_device()) s += ", staged through pinned host memory";
  return s;
}

void TcpLink::tell_neighbours(const std::string& why) noexcept {
  const std::string note = give_up_note(why);
  for (const Stream& s : streams_) send_give_up_note(s.prev.fd(), note);
}

// Why the connection to the next rank failed: as the way back saw it, or as the socket says.
std::string TcpLink::next_error(const Stream& s) {
  return s.next_lost.empty() ? socket_error(s.next.fd()) : s.next_lost;
}

void TcpLink::take_note(Stream& s) const {
  if (s.next_closed) return;
  const GiveUpNews news = take_give_up_note(s.next.fd(), s.note);
  if (news.kind == GiveUpNews::Kind::kNote) throw NetError(next_name_ + " gave up: " + news.text);
  if (news.kind == GiveUpNews::Kind::kNotANote)
    throw NetError(next_name_ +
                   " sent bytes back on the ring: do all ranks run the same railyard-bench?");
  if (news.kind == GiveUpNews::Kind::kClosed) {  // done or gone; a reset is kept for the error
    s.next_closed = true;
    s.next_lost = news.text;
  }
}

void TcpLink::exchange(const char* out, size_t out_bytes, char* landing, size_t in_bytes,
                       size_t granule, const Sink& sink) {
  const bool staged_out = memory_.on_device();
  const bool direct_in = landing && !memory_.on_device();
  const size_t n = streams_.size();
  std::vector<Flow> flows(n);
  auto next_piece = [&](Flow& f, Stream& s) {
    f.piece_len = staged_out ? std::min(kStage, f.out.len - f.sent) : f.out.len;
    f.piece = out + f.out.begin + f.sent;
    if (staged_out) {
      memory_.copy(s.stage_out, f.piece, f.piece_len);
      f.piece = s.stage_out;
    }
    f.piece_sent = 0;
  };
  for (size_t j = 0; j < n; ++j) {
    flows[j].out = part(out_bytes, granule, n, j);
    flows[j].in = part(in_bytes, granule, n, j);
    if (flows[j].out.len) next_piece(flows[j], streams_[j]);
  }
  std::vector<pollfd> fds(2 * n + 1);  // and, last, interrupt()
  auto busy = [&] {
    for (const Flow& f : flows)
      if (f.sent < f.out.len || f.got < f.in.len) return true;
    return false;
  };

  while (busy()) {
    for (size_t j = 0; j < n; ++j) {
      fds[2 * j] = {streams_[j].next.fd(),
                    static_cast<short>((flows[j].sent < flows[j].out.len ? POLLOUT : 0) |
                                       (streams_[j].next_closed ? 0 : POLLIN)),
                    0};
      fds[2 * j + 1] = {streams_[j].prev.fd(),
                        static_cast<short>(flows[j].got < flows[j].in.len ? POLLIN : 0), 0};
    }
    fds[2 * n] = {interrupt_fd(), POLLIN, 0};
    const int r = ::poll(fds.data(), fds.size(), static_cast<int>(timeout_.count()));
    if (r == 0) {
      bool receiving = false;
      for (const Flow& f : flows) receiving |= f.got < f.in.len;
      throw NetError("timed out after " + std::to_string(timeout_.count() / 1000) +
                     " s waiting for " + (receiving ? prev_name_ : next_name_));
    }
    if (r < 0) {
      if (errno == EINTR) continue;
      throw NetError(std::string("poll: ") + std::strerror(errno));
    }
    if (fds[2 * n].revents) throw NetError(kInterrupted);
    // A note from the next rank comes first: the error this rank then sees sending to it is
    // only that rank leaving.
    for (size_t j = 0; j < n; ++j)
      if (fds[2 * j].revents & (POLLIN | POLLERR | POLLHUP)) take_note(streams_[j]);
    // A connection this exchange does not send or receive on reports a reset or a timeout
    // whatever it asked for: ignored, it made poll() return at once, forever, and the timeout
    // never came. It is named after the connections in use have had their say: when a
    // neighbour dies, the one that saw it first resets its connections too, and "rank 2 closed
    // the connection" on the data path says more than "lost rank 1" beside it.
    std::string lost_unused;
    for (size_t j = 0; j < n && lost_unused.empty(); ++j) {
      if (!(fds[2 * j].events & POLLOUT) && (fds[2 * j].revents & (POLLERR | POLLHUP)))
        lost_unused = "lost " + next_name_ + ": " + next_error(streams_[j]);
      else if (fds[2 * j + 1].events == 0 && (fds[2 * j + 1].revents & (POLLERR | POLLHUP)))
        lost_unused = "lost " + prev_name_ + ": " + socket_error(streams_[j].prev.fd());
    }
    for (size_t j = 0; j < n; ++j) {
      Flow& f = flows[j];
      Stream& s = streams_[j];
      if (f.sent < f.out.len && (fds[2 * j].revents & (POLLOUT | POLLERR | POLLHUP))) {
        const ssize_t k = ::send(s.next.fd(), f.piece + f.piece_sent, f.piece_len - f.piece_sent,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno != EAGAIN && errno != EINTR) {
          const std::string why = std::strerror(errno);
          take_note(s);  // said before it left?
          throw NetError("lost " + next_name_ + ": " + (s.next_lost.empty() ? why : s.next_lost));
        }
        if (k > 0) {
          f.sent += static_cast<size_t>(k);
          f.piece_sent += static_cast<size_t>(k);
          if (f.piece_sent == f.piece_len && f.sent < f.out.len) next_piece(f, s);
        }
      }
      if (f.got < f.in.len && (fds[2 * j + 1].revents & (POLLIN | POLLERR | POLLHUP))) {
        char* base = direct_in ? landing + f.in.begin : nullptr;
        char* into = direct_in ? base + f.got : s.stage_in + (f.got - f.stage_at);
        const size_t room = direct_in ? f.in.len - f.got
                                      : std::min(kStage - (f.got - f.stage_at), f.in.len - f.got);
        const ssize_t k = ::recv(s.prev.fd(), into, room, MSG_DONTWAIT);
        if (k == 0) throw NetError(prev_name_ + " closed the connection (did it die?)");
        if (k < 0 && errno != EAGAIN && errno != EINTR)
          throw NetError("lost " + prev_name_ + ": " + std::strerror(errno));
        if (k <= 0) continue;
        f.got += static_cast<size_t>(k);
        // Hand over whole granules as they arrive (everything, once the part is complete).
        const size_t ready = f.got == f.in.len ? f.got : f.got / granule * granule;
        if (ready > f.delivered) {
          sink(f.in.begin + f.delivered,
               direct_in ? base + f.delivered : s.stage_in + (f.delivered - f.stage_at),
               ready - f.delivered);
          f.delivered = ready;
        }
        if (!direct_in) {  // keep only the partial granule, if any, at the front of the stage
          std::memmove(s.stage_in, s.stage_in + (f.delivered - f.stage_at), f.got - f.delivered);
          f.stage_at = f.delivered;
        }
      }
    }
    if (!lost_unused.empty() && busy()) throw NetError(lost_unused);
  }
}

}  // namespace railyard::rdma
