#include "nccl-tests-wrapper/fleet/control.h"

#include "rdma/transport/frame.h"

namespace railyard::validate {

void send_message(const rdma::Socket& s, const nlohmann::json& message, const std::string& peer) {
  // Text from a peer may not be UTF-8: replaced, never a throw in the middle of a run.
  rdma::send_frame(s, message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), peer);
}

nlohmann::json recv_message(const rdma::Socket& s, const std::string& peer,
                            std::chrono::milliseconds timeout, size_t max_bytes) {
  return rdma::parse_control_json(rdma::recv_frame(s, peer, timeout, max_bytes), peer);
}

}  // namespace railyard::validate
