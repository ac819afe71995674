// Rank 0's door: the rendezvous where every other rank joins, on a network strangers share.
// Each connection is admitted in a thread of its own under its own deadline (proof of the token,
// then the hello), so a silent or trickling stranger holds up nobody; a connection that fails,
// or claims a rank already taken, is dropped and logged while the door stays open for the real
// rank until the run's timeout. At most kMaxPending connections are admitted at once; more are
// closed as they come.
#pragma once

#include <chrono>
#include <functional>
#include <set>
#include <string>

#include "rdma/transport/socket.h"

namespace railyard::rdma {

struct Joiner {
  int rank = -1;
  std::string hello;  // what the joiner said, for the caller to keep
  Socket socket;      // set by admit_ranks once the joiner is in
};

// Proves the joiner on `s` and reads its hello by `deadline`; returns the rank it claims (and
// its hello). Throws NetError (or AuthError) to drop it. `from` names the connection in errors.
using Admit = std::function<Joiner(const Socket& s, const std::string& from,
                                   std::chrono::steady_clock::time_point deadline)>;

struct DoorOptions {
  std::chrono::milliseconds timeout;  // for every awaited rank to be in
  // What the ranks still missing are awaited for, after their names in the timeout's error:
  // "timed out after 60 s waiting for rank 1, 2 <to_join>".
  std::string to_join;
  std::function<void(const std::string& why)> dropped;  // one line per connection turned away
};

inline constexpr size_t kMaxPending = 64;

// Hands each admitted joiner to `joined` (on the calling thread, as it comes in) and returns once
// every rank in `awaited` is in. Throws NetError ("timed out after N s waiting for ...") when the
// timeout comes first; the joiners handed over until then stay the caller's.
void admit_ranks(const Socket& server, std::set<int> awaited, const Admit& admit,
                 const DoorOptions& options, const std::function<void(Joiner)>& joined);

}  // namespace railyard::rdma
