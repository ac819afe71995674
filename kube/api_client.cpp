#include "kube/api_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>

namespace railyard::kube {

using json = nlohmann::json;

namespace {

constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// "Retry-After: 7" (seconds; the HTTP-date form is left unread): how long the server asks us to
// wait, for the driver's backoff.
size_t read_retry_after(char* data, size_t size, size_t n, void* out) {
  const std::string_view line(data, size * n);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size() &&
      std::equal(kName.begin(), kName.end(), line.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    std::string_view v = line.substr(kName.size());
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    long secs = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
    if (ec == std::errc() && end != v.data() && secs >= 0)
      *static_cast<std::optional<long>*>(out) = secs;
  }
  return size * n;
}

// A body past the cap stops the transfer (curl reports a write error): an API server's answer is
// not allowed to fill our memory.
size_t append_body(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * n > ApiClient::kMaxBody) return 0;
  body->append(data, size * n);
  return size * n;
}

std::string reason_phrase(long status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "";
  }
}

}  // namespace

ApiConfig in_cluster_config(const ApiConfig& override) {
  ApiConfig c = override;
  if (c.server.empty()) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host)
      throw std::runtime_error(
          "not in a pod (KUBERNETES_SERVICE_HOST is not set) and no --server given");
    std::string h = host;
    if (h.find(':') != std::string::npos) h = "[" + h + "]";  // an IPv6 address
    c.server = "https://" + h + ":" + (port && *port ? port : "443");
  }
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (c.token_file.empty()) c.token_file = std::string(kServiceAccountDir) + "/token";
  if (c.ca_file.empty()) c.ca_file = std::string(kServiceAccountDir) + "/ca.crt";
  return c;
}

json ApiResponse::json() const {
  return json::parse(body, nullptr, false, true);
}

std::string ApiResponse::message() const {
  if (status == 0) return body;  // the transport's error
  std::string out = "HTTP " + std::to_string(status);
  if (auto phrase = reason_phrase(status); !phrase.empty()) out += " " + phrase;
  const auto j = json();
  if (j.is_object() && j.contains("message") && j["message"].is_string())
    return out + ": " + j["message"].get<std::string>();
  if (!body.empty()) return out + ": " + body.substr(0, 300);
  return out;
}

ApiError::ApiError(std::string_view method, std::string_view path, const ApiResponse& r)
    : std::runtime_error(std::string(method) + " " + std::string(path) + ": " + r.message()),
      status_(r.status),
      retry_after_s_(r.retry_after_s) {}

std::chrono::milliseconds Backoff::after_failure(std::optional<long> retry_after_s) {
  auto wait = interval_;
  for (int i = 0; i < failures_ && wait < cap_; ++i) wait *= 2;
  ++failures_;
  wait = std::min(wait, cap_);
  if (retry_after_s && *retry_after_s > 0)
    wait = std::max(wait, std::min<std::chrono::milliseconds>(std::chrono::seconds(*retry_after_s),
                                                              std::chrono::minutes(5)));
  return wait;
}

struct ApiClient::Impl {
  CURL* curl = nullptr;
};

ApiClient::ApiClient(ApiConfig config) : config_(std::move(config)), impl_(new Impl) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  impl_->curl = curl_easy_init();
  if (!impl_->curl) throw std::runtime_error("curl_easy_init failed");
}

ApiClient::~ApiClient() {
  if (impl_ && impl_->curl) curl_easy_cleanup(impl_->curl);
}

ApiResponse ApiClient::request(std::string_view method, const std::string& path, const json* body) {
  CURL* c = impl_->curl;
  curl_easy_reset(c);  // keeps the connection, forgets the last request's options
  ApiResponse r;
  std::string token;
  if (!config_.token_file.empty()) {
    try {
      token = read_file(config_.token_file);
    } catch (const std::exception& e) {
      r.body = e.what();
      return r;
    }
  }
  const std::string url = config_.server + path;
  const std::string payload = body ? body->dump() : "";
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  if (body)
    headers =
        curl_slist_append(headers, method == "PATCH" ? "Content-Type: application/merge-patch+json"
                                                     : "Content-Type: application/json");
  // No "Expect: 100-continue" round trip before a large body.
  headers = curl_slist_append(headers, "Expect:");
  const std::string auth = "Authorization: Bearer " + token;
  if (!token.empty()) headers = curl_slist_append(headers, auth.c_str());
  const std::string verb(method);
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, verb.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_USERAGENT, config_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 15000L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  if (!config_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  if (body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, read_retry_after);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.retry_after_s);
  const CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    r.status = 0;
    r.body = config_.server + ": " + (errbuf[0] ? errbuf : curl_easy_strerror(rc));
    return r;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

json ApiClient::call(std::string_view method, const std::string& path, const json* body) {
  auto r = request(method, path, body);
  if (!r.ok()) throw ApiError(method, path, r);
  return r.json();
}

std::string rfc3339_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string url_escape(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

}  // namespace railyard::kube
