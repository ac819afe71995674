// The metrics endpoint's answers to what a client may send, byte for byte as the server reads it.
#include <catch2/catch.hpp>

#include "deviceplugin/metrics.h"

using railyard::deviceplugin::answer_request_bytes;
using railyard::deviceplugin::Metrics;

namespace {
std::string ask(const std::string& bytes, bool healthy = true) {
  Metrics m;
  m.count_allocation("railyard.io/rail0", 2);
  return answer_request_bytes(bytes, m, [healthy] { return healthy; });
}
}  // namespace

TEST_CASE("metrics answers: /metrics, /healthz, the rest", "[deviceplugin][metrics]") {
  const auto metrics = ask("GET /metrics HTTP/1.1\r\nHost: n\r\n\r\n");
  CHECK(metrics.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(metrics.find("railyard_allocated_devices_total{resource=\"railyard.io/rail0\"} 2") !=
        std::string::npos);
  CHECK(ask("GET /healthz HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  CHECK(ask("GET /healthz HTTP/1.1\r\n\r\n", false).rfind("HTTP/1.1 503", 0) == 0);
  CHECK(ask("GET /etc/passwd HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0) == 0);
  CHECK(ask("POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab").rfind("HTTP/1.1 405", 0) == 0);
}

TEST_CASE("metrics answers: junk, oversize and incomplete requests get none",
          "[deviceplugin][metrics]") {
  CHECK(ask(std::string(200, '\xff')).empty());
  CHECK(ask("GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n").empty());
  CHECK(ask("POST /metrics HTTP/1.1\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'b'))
            .empty());
  CHECK(ask("GET /metrics HTTP/1.1\r\nHost: n\r\n").empty());
}
