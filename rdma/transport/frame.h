// Control messages over a TCP connection: a 4-byte length, then the text. Both the bench's
// rendezvous and railyard-validate fleet's control channel speak it, with peers that may be
// strangers: the whole frame is read within one deadline (a peer trickling a byte at a time
// cannot stretch it), a length above the caller's cap is refused before anything is allocated,
// and JSON is parsed only when its nesting stays shallow.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "rdma/transport/socket.h"

namespace railyard::rdma {

void send_frame(const Socket& s, std::string_view text, const std::string& peer);

// Throws NetError naming `peer`: the deadline passed, the connection closed, or the length is
// above `max_bytes`.
std::string recv_frame(const Socket& s, const std::string& peer, std::chrono::milliseconds timeout,
                       size_t max_bytes);

// `text` as JSON when it is JSON nested at most `max_depth` deep (objects and arrays); throws
// NetError naming `peer` otherwise. A deep document costs nothing to send and much to walk.
nlohmann::json parse_control_json(const std::string& text, const std::string& peer,
                                  int max_depth = 16);

}  // namespace railyard::rdma
