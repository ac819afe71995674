// railyard-device-plugin as the kubelet sees it: resident memory once it serves, Allocate latency
// over many calls, and the time from kubelet.sock being recreated (a kubelet restart) to every
// resource registered again. The kubelet is a stand-in in this process; the plugin is the real
// binary on a generated fixture.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test/support/deviceplugin_rig.h"
#include "test/support/temp_dir.h"

using namespace railyard::testing;
using namespace std::chrono;
namespace fs = std::filesystem;

namespace {

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard-device-plugin: RSS, Allocate latency, re-registration time"};
  std::string root, json_out, config, devinfo;
  int calls = 10000, restarts = 20;
  app.add_option("--sysfs-root", root, "a generated fixture")->required();
  app.add_option("--calls", calls, "Allocate calls")->capture_default_str();
  app.add_option("--restarts", restarts, "kubelet restarts")->capture_default_str();
  app.add_option("--json", json_out, "write the results as JSON");
  app.add_option("--config", config, "the plugin's --config");
  app.add_option("--devinfo-dir", devinfo, "the plugin's --devinfo-dir (nodes: /var/run, a tmpfs)");
  CLI11_PARSE(app, argc, argv);

  TempDir dir;
  const fs::path kubelet_dir = dir.path() / "kubelet";
  fs::create_directories(kubelet_dir);
  auto kubelet = std::make_unique<FakeKubelet>(kubelet_dir);
  std::ofstream(dir.path() / "rails.json") << "{}";
  std::vector<std::string> args = {
      "--sysfs-root",   root,
      "--rails",        (dir.path() / "rails.json").string(),
      "--kubelet-dir",  kubelet_dir.string(),
      "--devinfo-dir",  devinfo.empty() ? (dir.path() / "devinfo").string() : devinfo,
      "--metrics-addr", "127.0.0.1:0",
      "--log-level",    "warning"};
  if (!config.empty()) args.insert(args.end(), {"--config", config});
  PluginProcess plugin(args, dir.path() / "plugin.log");
  // The default pools on this node: the bundles and one VF pool per rail.
  auto regs = kubelet->wait_for(1, seconds(10));
  if (regs.empty()) {
    std::cerr << "the plugin did not register:\n" << plugin.log();
    return 1;
  }
  // What the kubelet does next: one ListAndWatch stream per resource, kept open.
  const size_t resources = kubelet->wait_for(1000, milliseconds(500)).size();
  std::vector<std::unique_ptr<grpc::ClientContext>> ctxs;
  std::vector<std::unique_ptr<v1beta1::DevicePlugin::Stub>> stubs;
  std::vector<std::unique_ptr<grpc::ClientReader<v1beta1::ListAndWatchResponse>>> streams;
  size_t devices = 0;
  for (const auto& r : kubelet->received()) {
    stubs.push_back(plugin_client(kubelet_dir / r.endpoint()));
    ctxs.push_back(std::make_unique<grpc::ClientContext>());
    streams.push_back(stubs.back()->ListAndWatch(ctxs.back().get(), v1beta1::Empty{}));
    v1beta1::ListAndWatchResponse list;
    if (streams.back()->Read(&list)) devices += static_cast<size_t>(list.devices_size());
  }
  const long rss = rss_kib(plugin.pid());

  // Allocate: one bundle per call, round robin, as a pod asking for one GPU+NIC.
  std::string bundle_sock;
  for (const auto& r : kubelet->received())
    if (r.resource_name() == "railyard.io/bundle") bundle_sock = r.endpoint();
  auto stub = plugin_client(kubelet_dir / bundle_sock);
  v1beta1::ListAndWatchResponse list;
  {
    grpc::ClientContext ctx;
    auto reader = stub->ListAndWatch(&ctx, v1beta1::Empty{});
    reader->Read(&list);
    ctx.TryCancel();
  }
  // The floor: a unary call that does nothing, on the same channel.
  std::vector<double> floor;
  for (int i = 0; i < calls / 10; ++i) {
    v1beta1::DevicePluginOptions opts;
    grpc::ClientContext ctx;
    const auto t0 = steady_clock::now();
    stub->GetDevicePluginOptions(&ctx, v1beta1::Empty{}, &opts);
    floor.push_back(duration<double, std::micro>(steady_clock::now() - t0).count());
  }
  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(calls));
  for (int i = 0; i < calls; ++i) {
    v1beta1::AllocateRequest req;
    req.add_container_requests()->add_devices_ids(list.devices(i % list.devices_size()).id());
    v1beta1::AllocateResponse resp;
    grpc::ClientContext ctx;
    const auto t0 = steady_clock::now();
    const auto st = stub->Allocate(&ctx, req, &resp);
    lat.push_back(duration<double, std::micro>(steady_clock::now() - t0).count());
    if (!st.ok()) {
      std::cerr << "Allocate failed: " << st.error_message() << "\n";
      return 1;
    }
  }

  // Kubelet restarts: it goes away, wipes its directory, comes back; time to all registered.
  std::vector<double> rereg;
  for (int i = 0; i < restarts; ++i) {
    kubelet->stop();
    for (const auto& e : fs::directory_iterator(kubelet_dir)) fs::remove(e.path());
    const auto t0 = steady_clock::now();
    kubelet = std::make_unique<FakeKubelet>(kubelet_dir);
    if (kubelet->wait_for(resources, seconds(5)).size() < resources) {
      std::cerr << "re-registration " << i << " incomplete:\n" << plugin.log();
      return 1;
    }
    rereg.push_back(duration<double, std::milli>(steady_clock::now() - t0).count());
  }
  for (auto& c : ctxs) c->TryCancel();

  const double p50 = percentile(lat, 0.50), p99 = percentile(lat, 0.99);
  const double rr50 = percentile(rereg, 0.5), rrmax = percentile(rereg, 1.0);
  std::printf("%-44s %12s %12s  %s\n", "metric", "value", "target", "verdict");
  auto row = [](const char* what, double v, const char* unit, double target) {
    char val[32], tgt[32];
    std::snprintf(val, sizeof val, "%.2f %s", v, unit);
    std::snprintf(tgt, sizeof tgt, "< %g %s", target, unit);
    std::printf("%-44s %12s %12s  %s\n", what, val, tgt, v < target ? "met" : "MISSED");
  };
  std::printf("(%zu resources, %zu devices advertised)\n", resources, devices);
  row("RSS after start, ListAndWatch streams open", static_cast<double>(rss) / 1024.0, "MiB", 15);
  row("Allocate latency p50", p50 / 1000.0, "ms", 1);
  row("Allocate latency p99", p99 / 1000.0, "ms", 1);
  std::printf("%-44s %12.3f ms (p99 %.3f ms)\n", "gRPC floor: GetDevicePluginOptions p50",
              percentile(floor, 0.5) / 1000.0, percentile(floor, 0.99) / 1000.0);
  row("kubelet.sock recreated -> all registered, median", rr50, "ms", 1000);
  row("kubelet.sock recreated -> all registered, max", rrmax, "ms", 1000);
  if (!json_out.empty())
    std::ofstream(json_out) << nlohmann::json{{"resources", resources},
                                              {"devices", devices},
                                              {"rss_mib", static_cast<double>(rss) / 1024.0},
                                              {"allocate_p50_ms", p50 / 1000.0},
                                              {"allocate_p99_ms", p99 / 1000.0},
                                              {"allocate_calls", calls},
                                              {"reregister_median_ms", rr50},
                                              {"reregister_max_ms", rrmax}}
                                   .dump(2)
                            << "\n";
  return plugin.stop(SIGTERM, seconds(5)) == 0 ? 0 : 1;
}
