// A small client for the Kubernetes API server: JSON over HTTPS with a bearer token (libcurl),
// enough for the DRA driver (its Node, its ResourceSlices, claims' status) and the validator's
// --apply (DeviceTaintRules, the Node's labels and taints). In a pod it uses the service
// account's in-cluster configuration; tests name the server, token and CA themselves.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace railyard::kube {

struct ApiConfig {
  std::string server;                   // https://10.96.0.1:443
  std::string token_file;               // read again on every request: projected tokens rotate
  std::string ca_file;                  // empty: the system's CAs
  std::string user_agent = "railyard";  // who the API server's audit log names
};

// KUBERNETES_SERVICE_HOST/PORT and /var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt};
// a field given in `override` wins. Throws when no server is known.
ApiConfig in_cluster_config(const ApiConfig& override = {});

struct ApiResponse {
  long status = 0;  // HTTP status; 0 when no response came (connection, TLS)
  std::string body;
  // The server's Retry-After in seconds (429, 503), when it sent one as a number.
  std::optional<long> retry_after_s;
  nlohmann::json json() const;  // the body parsed; null when it is not JSON
  // "HTTP 403 Forbidden: resourceslices.resource.k8s.io is forbidden: ..." from a Status
  // object, or the transport's error.
  std::string message() const;
  bool ok() const { return status >= 200 && status < 300; }
};

// A failed request: the method, path and the API server's answer.
class ApiError : public std::runtime_error {
 public:
  ApiError(std::string_view method, std::string_view path, const ApiResponse& r);
  long status() const { return status_; }
  std::optional<long> retry_after_s() const { return retry_after_s_; }

 private:
  long status_;
  std::optional<long> retry_after_s_;
};

// How long to wait before the next try after failures: the interval doubled per failure in a
// row up to a cap, and never less than what the API server asked for with Retry-After (itself
// capped: a server's answer must not park the driver for a day). A success starts over.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds interval, std::chrono::milliseconds cap)
      : interval_(interval), cap_(cap) {}
  std::chrono::milliseconds after_failure(std::optional<long> retry_after_s = std::nullopt);
  void succeeded() { failures_ = 0; }

 private:
  std::chrono::milliseconds interval_, cap_;
  int failures_ = 0;
};

class ApiClient {
 public:
  static constexpr size_t kMaxBody = 64 << 20;

  explicit ApiClient(ApiConfig config);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // One request; never throws for an HTTP status (see ApiResponse::ok). A PATCH body is a JSON
  // merge patch (RFC 7386). An answer over kMaxBody is cut off and reported as a failure.
  ApiResponse request(std::string_view method, const std::string& path,
                      const nlohmann::json* body = nullptr);
  // The same, throwing ApiError unless the status is 2xx; returns the parsed body.
  nlohmann::json call(std::string_view method, const std::string& path,
                      const nlohmann::json* body = nullptr);

  const ApiConfig& config() const { return config_; }

 private:
  struct Impl;
  ApiConfig config_;
  std::unique_ptr<Impl> impl_;
};

// Now, as the API server writes times (RFC 3339, UTC, seconds): "2026-12-07T18:30:00Z".
std::string rfc3339_now();

// Percent-encoding for a query parameter's value ("spec.nodeName=n1" -> "spec.nodeName%3Dn1").
std::string url_escape(std::string_view s);

}  // namespace railyard::kube
