#include "deviceplugin/metrics.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <list>
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
  // The gauge follows at once rather than at the next health pass; a pool the passes have not
  // published yet gets no row until they do.
  if (auto it = gauges_.pools.find(resource); it != gauges_.pools.end()) it->second.registered = ok;
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

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// A whole request, from accept to the last byte of the answer: a client that sends nothing, or
// trickles a byte at a time, is cut off then. A probe or a scraper on the node needs milliseconds.
constexpr auto kRequestDeadline = std::chrono::seconds(2);
// Connections held at once. The oldest goes when one more arrives: a probe is never turned away
// because strangers hold the port, and a stranger holds a slot for at most kRequestDeadline.
constexpr size_t kMaxConnections = 64;
constexpr uint32_t kHeaderLimit = 8 * 1024;
constexpr uint64_t kBodyLimit = 1024;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

void limit(http::request_parser<http::string_body>& parser) {
  parser.header_limit(kHeaderLimit);
  parser.body_limit(kBodyLimit);
}

void answer(const Request& req, Response& res, const Metrics& metrics,
            const std::function<bool()>& healthy) {
  res.version(req.version());
  res.keep_alive(false);
  res.result(http::status::ok);
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
}

}  // namespace

std::string answer_request_bytes(std::string_view request, const Metrics& metrics,
                                 const std::function<bool()>& healthy) {
  http::request_parser<http::string_body> parser;
  limit(parser);
  parser.eager(true);
  beast::error_code ec;
  size_t used = 0;
  while (!parser.is_done() && used < request.size()) {
    const size_t n = parser.put(asio::buffer(request.data() + used, request.size() - used), ec);
    if (ec == http::error::need_more) break;
    if (ec || n == 0) return "";
    used += n;
  }
  if (!parser.is_done()) {
    // The client closed after its last byte: a body without a length ends here.
    parser.put_eof(ec);
    if (ec || !parser.is_done()) return "";
  }
  Response res;
  answer(parser.get(), res, metrics, healthy);
  std::ostringstream out;
  out << res;
  return out.str();
}

// One connection: one request, one answer, closed. Runs on the server's single io thread, so the
// session list needs no lock; each slow client waits on its own, never in front of another.
struct MetricsServer::Session : std::enable_shared_from_this<Session> {
  Session(tcp::socket s, MetricsServer& server) : stream(std::move(s)), srv(server) {
    limit(parser);
  }
  void start() {
    stream.expires_after(kRequestDeadline);
    http::async_read(stream, buf, parser,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->read(ec); });
  }
  void read(beast::error_code ec) {
    if (ec) return finish();  // timeout, junk, a closed connection, or evicted
    answer(parser.get(), res, srv.metrics_, srv.healthy_);
    http::async_write(stream, res,
                      [self = shared_from_this()](beast::error_code, size_t) { self->finish(); });
  }
  void finish() {
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream.close();
    if (listed) {
      listed = false;
      srv.sessions_.erase(where);
    }
  }
  beast::tcp_stream stream;
  MetricsServer& srv;
  beast::flat_buffer buf;
  http::request_parser<http::string_body> parser;
  Response res;
  std::list<std::shared_ptr<Session>>::iterator where;
  bool listed = false;
};

struct MetricsServer::Impl {
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
};

MetricsServer::MetricsServer(const Metrics& metrics, std::function<bool()> healthy)
    : metrics_(metrics), healthy_(std::move(healthy)), impl_(std::make_unique<Impl>()) {}

MetricsServer::~MetricsServer() {
  if (thread_.joinable()) {
    impl_->io.stop();
    thread_.join();
  }
  sessions_.clear();  // before the io_context their sockets belong to
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
  if (!ec) acc.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error("--metrics-addr '" + addr + "': cannot listen there: " + ec.message());
  port_ = acc.local_endpoint().port();
  accept();
  thread_ = std::thread([this] { impl_->io.run(); });
}

void MetricsServer::accept() {
  impl_->acceptor.async_accept([this](boost::system::error_code ec, tcp::socket sock) {
    if (!ec) {
      if (sessions_.size() >= kMaxConnections) sessions_.front()->finish();
      auto s = std::make_shared<Session>(std::move(sock), *this);
      s->where = sessions_.insert(sessions_.end(), s);
      s->listed = true;
      s->start();
    }
    // Out of descriptors (EMFILE) and the like: try again with the next connection.
    if (impl_->acceptor.is_open()) accept();
  });
}

}  // namespace railyard::deviceplugin
