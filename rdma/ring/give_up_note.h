// What a rank that gives up tells its neighbours, over a connection that carries nothing else
// after set-up (the verbs link's TCP sockets; for the TCP link, the way back of a connection
// from the previous rank): the error it gave up with. In a ring of three, the
// neighbour of a dead rank sees it first and exits; without the note, the rank beyond sees only
// that neighbour close and names the wrong rank (the lab saw "rank 1 closed the connection" when
// rank 2 had been killed). One line; a note cut short is waited for.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace railyard::rdma {

inline constexpr std::string_view kGiveUpPrefix = "railyard-bench gave up: ";

// The bytes to send: the prefix, the error (newlines flattened) and a newline.
std::string give_up_note(std::string_view why);

// Bytes read from such a connection: kIncomplete while they may still grow into a note, the
// error once the line is whole, kNotANote when they cannot be one (a protocol error).
struct GiveUpNote {
  enum class State { kIncomplete, kComplete, kNotANote } state;
  std::string why;
};
GiveUpNote read_give_up_note(std::string_view bytes);

// The socket side, for both links. send_give_up_note: best effort, never blocks, no SIGPIPE.
void send_give_up_note(int fd, std::string_view note) noexcept;

// Takes what has come on a connection that carries only notes, without blocking, into `pending`:
// nothing yet, a whole note (its error in `text`), bytes that cannot be one, or the connection's
// end (a plain close, or a reset: then `text` says so, as strerror does).
struct GiveUpNews {
  enum class Kind { kNothing, kNote, kNotANote, kClosed } kind = Kind::kNothing;
  std::string text;
};
GiveUpNews take_give_up_note(int fd, std::string& pending);

}  // namespace railyard::rdma
