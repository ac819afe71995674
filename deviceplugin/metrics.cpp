#include "deviceplugin/metrics.h"

#include <httplib.h>

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

MetricsServer::MetricsServer(const Metrics& metrics, std::function<bool()> healthy)
    : metrics_(metrics), healthy_(std::move(healthy)), http_(std::make_unique<httplib::Server>()) {
  // A scraper and a liveness probe: two threads are plenty (the default is one per core, >= 8).
  http_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  http_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    const bool ok = healthy_();
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "not serving\n", "text/plain");
  });
}

MetricsServer::~MetricsServer() {
  if (thread_.joinable()) {
    http_->stop();
    thread_.join();
  }
}

void MetricsServer::start(const std::string& addr) {
  const auto colon = addr.rfind(':');
  if (colon == std::string::npos)
    throw std::runtime_error("--metrics-addr '" + addr + "': want HOST:PORT");
  std::string host = addr.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  int port = 0;
  try {
    port = std::stoi(addr.substr(colon + 1));
  } catch (const std::exception&) {
    throw std::runtime_error("--metrics-addr '" + addr + "': bad port");
  }
  if (port < 0 || port > 65535) throw std::runtime_error("--metrics-addr '" + addr + "': bad port");
  port_ = port == 0 ? http_->bind_to_any_port(host) : (http_->bind_to_port(host, port) ? port : -1);
  if (port_ <= 0) throw std::runtime_error("--metrics-addr '" + addr + "': cannot listen there");
  thread_ = std::thread([this] { http_->listen_after_bind(); });
}

}  // namespace railyard::deviceplugin
