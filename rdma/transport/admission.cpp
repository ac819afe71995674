#include "rdma/transport/admission.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "rdma/transport/channel_auth.h"

namespace railyard::rdma {
namespace {

using Clock = std::chrono::steady_clock;

// A self-pipe: the admitting threads wake the door when they are done.
struct Wakeup {
  int fd[2] = {-1, -1};
  Wakeup() {
    if (::pipe2(fd, O_CLOEXEC | O_NONBLOCK) != 0)
      throw NetError(std::string("pipe: ") + std::strerror(errno));
  }
  ~Wakeup() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  void ring() const { (void)!::write(fd[1], "x", 1); }
  void drain() const {
    char b[64];
    while (::read(fd[0], b, sizeof b) > 0) {
    }
  }
};

struct Pending {
  std::thread thread;
  Socket socket;  // alive until the door is done with it: closing it early would free its fd
  bool done = false;
  std::optional<Joiner> joined;
  std::string error;
};

}  // namespace

void admit_ranks(const Socket& server, std::set<int> awaited, const Admit& admit,
                 const DoorOptions& options, const std::function<void(Joiner)>& joined) {
  const auto deadline = Clock::now() + options.timeout;
  Wakeup wake;
  std::mutex mu;
  std::list<Pending> pending;  // stable addresses for the threads

  auto close_door = [&] {
    {
      std::lock_guard lk(mu);
      for (auto& p : pending)
        if (!p.done) ::shutdown(p.socket.fd(), SHUT_RDWR);
    }
    for (auto& p : pending) p.thread.join();
  };
  try {
    while (!awaited.empty()) {
      // What the admitting threads finished: ranks in, strangers out.
      wake.drain();
      {
        std::lock_guard lk(mu);
        for (auto it = pending.begin(); it != pending.end();) {
          if (!it->done) {
            ++it;
            continue;
          }
          it->thread.join();
          if (it->joined) {
            Joiner j = std::move(*it->joined);
            j.socket = std::move(it->socket);
            if (awaited.erase(j.rank))
              joined(std::move(j));
            else
              options.dropped("a connection claiming rank " + std::to_string(j.rank) +
                              ", which has joined already or is not awaited");
          } else {
            options.dropped(it->error);
          }
          it = pending.erase(it);
        }
      }
      if (awaited.empty()) break;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        std::string names;
        for (int r : awaited) names += (names.empty() ? "rank " : ", ") + std::to_string(r);
        throw NetError("timed out after " + std::to_string(options.timeout.count() / 1000) +
                       " s waiting for " + names + " " + options.to_join);
      }
      pollfd fds[2] = {{server.fd(), POLLIN, 0}, {wake.fd[0], POLLIN, 0}};
      const int r = ::poll(fds, 2, static_cast<int>(left.count()));
      if (r < 0 && errno != EINTR) throw NetError(std::string("poll: ") + std::strerror(errno));
      if (r <= 0 || !(fds[0].revents & POLLIN)) continue;
      Socket s;
      try {
        s = server.accept_one(std::chrono::milliseconds(1), "a joining rank");
      } catch (const NetError&) {
        continue;  // it went away between poll and accept
      }
      std::lock_guard lk(mu);
      if (pending.size() >= kMaxPending) {
        options.dropped("a connection from " + s.peer_host() + ": " + std::to_string(kMaxPending) +
                        " others are being admitted already");
        continue;
      }
      Pending& p = pending.emplace_back();
      p.socket = std::move(s);
      const auto by = std::min(deadline, Clock::now() + kHandshakeLimit);
      p.thread = std::thread([&, &p = p, by] {
        const std::string from = "a connection from " + p.socket.peer_host() + " to the rendezvous";
        std::optional<Joiner> j;
        std::string error;
        try {
          j = admit(p.socket, from, by);
        } catch (const std::exception& e) {
          error = e.what();
        }
        std::lock_guard lk2(mu);
        p.joined = std::move(j);
        p.error = std::move(error);
        p.done = true;
        wake.ring();
      });
    }
  } catch (...) {
    close_door();
    throw;
  }
  close_door();
}

}  // namespace railyard::rdma
