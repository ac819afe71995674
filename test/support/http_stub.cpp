#include "test/support/http_stub.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace railyard::test {

namespace {

std::string header(const std::string& head, const std::string& name) {
  const auto at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const auto begin = at + name.size() + 4;
  return head.substr(begin, head.find("\r\n", begin) - begin);
}

}  // namespace

HttpStub::HttpStub(Handler handler) : handler_(std::move(handler)) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0 || listen(fd_, 16) != 0)
    throw std::runtime_error("HttpStub: cannot listen on loopback");
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { serve(); });
}

HttpStub::~HttpStub() {
  shutdown(fd_, SHUT_RDWR);  // accept() returns, the thread ends
  close(fd_);
  thread_.join();
}

void HttpStub::serve() {
  for (;;) {
    const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    std::string in;
    char buf[65536];
    size_t header_end = std::string::npos, need = 0;
    for (;;) {
      const ssize_t n = read(c, buf, sizeof buf);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      if (header_end == std::string::npos &&
          (header_end = in.find("\r\n\r\n")) != std::string::npos) {
        const std::string length = header(in.substr(0, header_end), "Content-Length");
        need = header_end + 4 + (length.empty() ? 0 : std::stoul(length));
      }
      if (header_end != std::string::npos && in.size() >= need) break;
    }
    if (header_end == std::string::npos) {
      close(c);
      continue;
    }
    const auto sp1 = in.find(' '), sp2 = in.find(' ', sp1 + 1);
    const std::string head = in.substr(0, header_end);
    const Answer a = handler_({in.substr(0, sp1), in.substr(sp1 + 1, sp2 - sp1 - 1),
                               header(head, "Content-Type"), in.substr(header_end + 4)});
    const std::string body = a.body.dump();
    const std::string resp =
        "HTTP/1.1 " + std::to_string(a.status) +
        " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n" + a.extra_headers + "Connection: close\r\n\r\n" + body;
    (void)!write(c, resp.data(), resp.size());
    close(c);
  }
}

}  // namespace railyard::test
