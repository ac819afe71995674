#include "rdma/transport/frame.h"

#include <cstdint>

namespace railyard::rdma {

void send_frame(const Socket& s, std::string_view text, const std::string& peer) {
  const uint32_t n = static_cast<uint32_t>(text.size());
  s.send_all(&n, sizeof n, peer);
  s.send_all(text.data(), n, peer);
}

std::string recv_frame(const Socket& s, const std::string& peer, std::chrono::milliseconds timeout,
                       size_t max_bytes) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  uint32_t n = 0;
  s.recv_all_until(&n, sizeof n, peer, deadline, timeout);
  if (n > max_bytes)
    throw NetError(peer + " sent a control message of " + std::to_string(n) + " bytes (at most " +
                   std::to_string(max_bytes) + " here)");
  std::string text(n, '\0');
  s.recv_all_until(text.data(), n, peer, deadline, timeout);
  return text;
}

nlohmann::json parse_control_json(const std::string& text, const std::string& peer, int max_depth) {
  // The nesting, counted outside strings before the parser builds anything.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw NetError(peer + " sent a control message nested deeper than " +
                       std::to_string(max_depth));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw NetError(peer + " sent a control message that is not JSON");
  }
}

}  // namespace railyard::rdma
