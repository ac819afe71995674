// railyard-validate fleet's control channel: rank 0 tells each rank what to do next (listen,
// test a pair, probe its neighbours, stop) and hears back, one JSON message at a time over the
// rendezvous connection, once both ends proved the token (rdma/transport/channel_auth.h).
// Messages are frames (rdma/transport/frame.h): read whole within one deadline, capped in size
// and nesting, so a rank that sends garbage, trickles or stops mid-message is named instead of
// hanging the fleet.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "rdma/transport/socket.h"

namespace railyard::validate {

// A joining rank's hello is small; rank 0's instructions carry a ring's table (a few hundred
// bytes a member), answers a number per rail.
inline constexpr size_t kHelloBytes = 64 * 1024;
inline constexpr size_t kControlBytes = 4 << 20;

void send_message(const rdma::Socket& s, const nlohmann::json& message, const std::string& peer);
// Throws rdma::NetError naming `peer` on timeout, a closed connection, a message larger than
// `max_bytes`, nested too deep, or not JSON.
nlohmann::json recv_message(const rdma::Socket& s, const std::string& peer,
                            std::chrono::milliseconds timeout, size_t max_bytes = kControlBytes);

}  // namespace railyard::validate
