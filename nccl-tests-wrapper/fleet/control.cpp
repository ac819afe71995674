#include "nccl-tests-wrapper/fleet/control.h"

#include <cstdint>

namespace railyard::validate {

void send_message(const rdma::Socket& s, const nlohmann::json& message, const std::string& peer) {
  const std::string text = message.dump();
  const uint32_t n = static_cast<uint32_t>(text.size());
  s.send_all(&n, sizeof n, peer);
  s.send_all(text.data(), n, peer);
}

nlohmann::json recv_message(const rdma::Socket& s, const std::string& peer,
                            std::chrono::milliseconds timeout) {
  uint32_t n = 0;
  s.recv_all(&n, sizeof n, peer, timeout);
  if (n > (16u << 20))
    throw rdma::NetError(peer + " sent a control message of " + std::to_string(n) + " bytes");
  std::string text(n, '\0');
  s.recv_all(text.data(), n, peer, timeout);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw rdma::NetError(peer + " sent a control message that is not JSON");
  }
}

}  // namespace railyard::validate
