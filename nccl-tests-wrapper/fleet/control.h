// railyard-validate fleet's control channel: rank 0 tells each rank what to do next (listen,
// test a pair, probe its neighbours, stop) and hears back, one JSON message at a time over the
// rendezvous connection. Messages are length-prefixed, so a rank that sends garbage or stops
// mid-message is named instead of hanging the fleet.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "rdma/transport/socket.h"

namespace railyard::validate {

void send_message(const rdma::Socket& s, const nlohmann::json& message, const std::string& peer);
// Throws rdma::NetError naming `peer` on timeout, a closed connection or a message that is not
// JSON.
nlohmann::json recv_message(const rdma::Socket& s, const std::string& peer,
                            std::chrono::milliseconds timeout);

}  // namespace railyard::validate
