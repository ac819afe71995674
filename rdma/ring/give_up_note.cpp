#include "rdma/ring/give_up_note.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace railyard::rdma {
namespace {

constexpr size_t kMaxWhy = 2048;

}  // namespace

std::string give_up_note(std::string_view why) {
  std::string note(kGiveUpPrefix);
  note += why.substr(0, kMaxWhy);  // within what read_give_up_note takes for a note
  std::replace(note.begin() + static_cast<std::ptrdiff_t>(kGiveUpPrefix.size()), note.end(), '\n',
               ' ');
  note += '\n';
  return note;
}

GiveUpNote read_give_up_note(std::string_view bytes) {
  using S = GiveUpNote::State;
  const size_t head = std::min(bytes.size(), kGiveUpPrefix.size());
  if (bytes.substr(0, head) != kGiveUpPrefix.substr(0, head)) return {S::kNotANote, {}};
  const size_t end = bytes.find('\n');
  if (end == std::string_view::npos) {
    // A note is a line of an error message: far longer than any error is not one.
    if (bytes.size() > kGiveUpPrefix.size() + kMaxWhy + 1) return {S::kNotANote, {}};
    return {S::kIncomplete, {}};
  }
  if (end < kGiveUpPrefix.size()) return {S::kNotANote, {}};
  return {S::kComplete,
          std::string(bytes.substr(kGiveUpPrefix.size(), end - kGiveUpPrefix.size()))};
}

void send_give_up_note(int fd, std::string_view note) noexcept {
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t n =
      ::send(fd, note.data(), note.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

GiveUpNews take_give_up_note(int fd, std::string& pending) {
  using K = GiveUpNews::Kind;
  char buf[512];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {};
    if (n == 0) return {K::kClosed, {}};
    if (n < 0) return {K::kClosed, std::strerror(errno)};
    pending.append(buf, static_cast<size_t>(n));
    const GiveUpNote note = read_give_up_note(pending);
    if (note.state == GiveUpNote::State::kComplete) return {K::kNote, note.why};
    if (note.state == GiveUpNote::State::kNotANote) return {K::kNotANote, {}};
  }
}

}  // namespace railyard::rdma
