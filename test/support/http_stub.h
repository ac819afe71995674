// An API server stand-in for tests: plain HTTP on loopback, one request per connection (libcurl
// copes), answered by the test's handler in a thread of its own. The tests keep the state.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace railyard::test {

class HttpStub {
 public:
  struct Request {
    std::string method, target, content_type, body;
  };
  struct Answer {
    int status = 200;
    nlohmann::json body = nlohmann::json::object();
    std::string extra_headers;  // "Retry-After: 7\r\n"
  };
  using Handler = std::function<Answer(const Request&)>;

  explicit HttpStub(Handler handler);
  ~HttpStub();
  HttpStub(const HttpStub&) = delete;
  HttpStub& operator=(const HttpStub&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void serve();
  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace railyard::test
