#include "deviceplugin/metrics.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace railyard::deviceplugin {

void Metrics::set_gauges(Gauges g) {
  std::lock_guard lk(mu_);
  gauges_ = std::move(g);
}

void Metrics::count_allocation(const std::string& resource, size_t devices) {
  std::lock_guard lk(mu_);
  auto& c = counters_[resource];
  ++c.allocations;
  c.devices += devices;
}

void Metrics::count_allocate_error(const std::string& resource) {
  std::lock_guard lk(mu_);
  ++counters_[resource].errors;
}

void Metrics::count_registration(const std::string& resource, bool ok) {
  std::lock_guard lk(mu_);
  auto& c = counters_[resource];
  ++(ok ? c.registrations : c.registration_errors);
}

std::string Metrics::render() const {
  std::lock_guard lk(mu_);
  std::ostringstream o;
  auto head = [&](const char* name, const char* type, const char* help) {
    o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  };
  head("railyard_devices", "gauge", "Devices advertised per resource, by health.");
  for (const auto& [r, p] : gauges_.pools) {
    o << "railyard_devices{resource=\"" << r << "\",health=\"Healthy\"} " << p.healthy << "\n";
    o << "railyard_devices{resource=\"" << r << "\",health=\"Unhealthy\"} " << p.unhealthy << "\n";
  }
  head("railyard_registered", "gauge", "1 when the kubelet accepted the resource's registration.");
  for (const auto& [r, p] : gauges_.pools)
    o << "railyard_registered{resource=\"" << r << "\"} " << (p.registered ? 1 : 0) << "\n";
  head("railyard_rail_link_up", "gauge", "1 when the rail's PF RDMA port is ACTIVE.");
  for (const auto& [k, rail] : gauges_.rails)
    o << "railyard_rail_link_up{rail=\"" << k << "\",device=\"" << rail.device << "\"} "
      << (rail.up ? 1 : 0) << "\n";
  head("railyard_allocations_total", "counter", "Containers served by Allocate.");
  for (const auto& [r, c] : counters_)
    o << "railyard_allocations_total{resource=\"" << r << "\"} " << c.allocations << "\n";
  head("railyard_allocated_devices_total", "counter", "Devices handed out by Allocate.");
  for (const auto& [r, c] : counters_)
    o << "railyard_allocated_devices_total{resource=\"" << r << "\"} " << c.devices << "\n";
  head("railyard_allocate_errors_total", "counter", "Allocate requests refused.");
  for (const auto& [r, c] : counters_)
    o << "railyard_allocate_errors_total{resource=\"" << r << "\"} " << c.errors << "\n";
  head("railyard_registrations_total", "counter", "Registrations with the kubelet, by result.");
  for (const auto& [r, c] : counters_) {
    o << "railyard_registrations_total{resource=\"" << r << "\",result=\"ok\"} " << c.registrations
      << "\n";
    o << "railyard_registrations_total{resource=\"" << r << "\",result=\"error\"} "
      << c.registration_errors << "\n";
  }
  return o.str();
}

namespace {

// One request, then the connection is closed.
void answer(boost::asio::ip::tcp::socket& sock, const Metrics& metrics,
            const std::function<bool()>& healthy) {
  namespace http = boost::beast::http;
  boost::system::error_code ec;
  // A client that sends nothing must not hold the only thread.
  const timeval tv{2, 0};
  ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  boost::beast::flat_buffer buf;
  http::request<http::string_body> req;
  http::read(sock, buf, req, ec);
  if (ec) return;
  http::response<http::string_body> res{http::status::ok, req.version()};
  res.keep_alive(false);
  const auto target = req.target();
  if (req.method() != http::verb::get && req.method() != http::verb::head) {
    res.result(http::status::method_not_allowed);
    res.body() = "GET only\n";
  } else if (target == "/metrics") {
    res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.body() = metrics.render();
  } else if (target == "/healthz") {
    const bool ok = healthy();
    res.result(ok ? http::status::ok : http::status::service_unavailable);
    res.body() = ok ? "ok\n" : "not serving\n";
  } else {
    res.result(http::status::not_found);
    res.body() = "/metrics or /healthz\n";
  }
  res.prepare_payload();
  http::write(sock, res, ec);
  sock.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
}

}  // namespace

struct MetricsServer::Impl {
  boost::asio::io_context io{1};
  boost::asio::ip::tcp::acceptor acceptor{io};
  std::mutex mu;  // guards stopping and client_fd against the fd being closed meanwhile
  bool stopping = false;
  int client_fd = -1;  // the connection being answered
};

MetricsServer::MetricsServer(const Metrics& metrics, std::function<bool()> healthy)
    : metrics_(metrics), healthy_(std::move(healthy)), impl_(std::make_unique<Impl>()) {}

MetricsServer::~MetricsServer() {
  if (!thread_.joinable()) return;
  {
    // close() from another thread does not wake a blocking accept() on Linux; shutdown() does
    // (EINVAL), and on the client's socket it ends a read that a silent scraper would hold.
    std::lock_guard lk(impl_->mu);
    impl_->stopping = true;
    ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
    if (impl_->client_fd >= 0) ::shutdown(impl_->client_fd, SHUT_RDWR);
  }
  thread_.join();
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
}

void MetricsServer::start(const std::string& addr) {
  namespace ip = boost::asio::ip;
  const auto colon = addr.rfind(':');
  if (colon == std::string::npos)
    throw std::runtime_error("--metrics-addr '" + addr + "': want HOST:PORT");
  std::string host = addr.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  int port = -1;
  try {
    port = std::stoi(addr.substr(colon + 1));
  } catch (const std::exception&) {
  }
  if (port < 0 || port > 65535) throw std::runtime_error("--metrics-addr '" + addr + "': bad port");
  boost::system::error_code ec;
  const ip::address where =
      host.empty() ? ip::address(ip::address_v6::any()) : ip::make_address(host, ec);
  if (ec)
    throw std::runtime_error("--metrics-addr '" + addr + "': '" + host + "' is not an address");
  const ip::tcp::endpoint ep(where, static_cast<unsigned short>(port));
  auto& acc = impl_->acceptor;
  acc.open(ep.protocol(), ec);
  if (!ec && host.empty()) acc.set_option(ip::v6_only(false), ec);  // ":PORT": v4 and v6
  if (!ec) acc.set_option(ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(16, ec);
  if (ec)
    throw std::runtime_error("--metrics-addr '" + addr + "': cannot listen there: " + ec.message());
  port_ = acc.local_endpoint().port();
  thread_ = std::thread([this] { serve(); });
}

void MetricsServer::serve() {
  auto stopping = [this] {
    std::lock_guard lk(impl_->mu);
    return impl_->stopping;
  };
  while (!stopping()) {
    boost::system::error_code ec;
    boost::asio::ip::tcp::socket sock(impl_->io);
    impl_->acceptor.accept(sock, ec);
    if (ec) continue;  // the loop's condition tells a stop from a failed accept
    {
      std::lock_guard lk(impl_->mu);
      if (impl_->stopping) return;
      impl_->client_fd = sock.native_handle();
    }
    answer(sock, metrics_, healthy_);
    std::lock_guard lk(impl_->mu);
    impl_->client_fd = -1;
    sock.close(ec);  // under the lock: the destructor never shuts down a reused descriptor
  }
}

}  // namespace railyard::deviceplugin
