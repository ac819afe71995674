// The kubelet's resource health stream (KEP-4680) without the kubelet: the feed's versions and
// waits, then NodeWatchResources over the plugin's real socket as the kubelet calls it: every
// device's health first, a rail going down within a poll, and a stop that ends the stream.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <future>
#include <thread>

#include "dra/api/dra_health.grpc.pb.h"
#include "dra/kubelet/health_feed.h"
#include "dra/kubelet/kubelet_plugin.h"
#include "dra/slices/health.h"
#include "test/support/dra_plugin_options.h"
#include "test/support/fixture_node.h"
#include "test/support/temp_dir.h"

using namespace railyard::dra;
using namespace std::chrono_literals;
using railyard::testing::GeneratedFixture;
namespace topo = railyard::topology;

namespace {

std::vector<Device> two_devices(bool second_healthy) {
  std::vector<Device> d(2);
  d[0].name = "nic-0000-19-00-0";
  d[1].name = "vf-0000-19-00-2";
  d[1].healthy = second_healthy;
  d[1].reason = second_healthy ? "" : "port mlx5_0/1 is not ACTIVE";
  return d;
}

}  // namespace

TEST_CASE("health feed: a version per change, waits bounded, close wakes", "[dra][health]") {
  HealthFeed feed;
  CHECK(feed.wait_after(0, 10ms).version == 0);  // nothing read yet: the wait runs out
  feed.update(two_devices(true));
  auto s = feed.wait_after(0, 10ms);
  CHECK(s.version == 1);
  REQUIRE(s.reports.size() == 2);
  CHECK(s.reports[1].healthy);
  feed.update(two_devices(true));  // the same again: no new version
  CHECK(feed.wait_after(0, 10ms).version == 1);
  feed.update(two_devices(false));
  s = feed.wait_after(1, 10ms);
  CHECK(s.version == 2);
  CHECK_FALSE(s.reports[1].healthy);
  CHECK(s.reports[1].message == "port mlx5_0/1 is not ACTIVE");
  auto long_reason = two_devices(false);
  long_reason[1].reason = std::string(2000, 'x');
  feed.update(long_reason);
  CHECK(feed.wait_after(2, 10ms).reports[1].message.size() == kMaxHealthMessage);
  // A waiter with a long limit is woken by close, not by its limit.
  auto waiter = std::async(std::launch::async, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    feed.wait_after(3, 60s);
    return std::chrono::steady_clock::now() - t0;
  });
  feed.close();
  CHECK(waiter.get() < 5s);
  CHECK(feed.closed());
}

TEST_CASE("kubelet plugin: the health stream as the kubelet reads it", "[dra][health]") {
  GeneratedFixture fx("dgx-h100");
  const topo::Node node = topo::discover(
      fx.sysfs(), topo::parse_rails_config(R"({"selectors": {"linkTypes": ["infiniband"]}})", "t"),
      {.vf_ports = true});
  railyard::testing::TempDir tmp;
  const PluginOptions opt = railyard::testing::dra_plugin_options(tmp.path(), fx.root());
  KubeletPlugin plugin(opt,
                       [](const std::string&, const std::string&) { return nlohmann::json(); });
  auto devices = build_devices(node, check_health(fx.sysfs(), node));
  plugin.update_node(std::make_shared<const topo::Node>(node), devices);
  plugin.start();

  auto channel =
      grpc::CreateChannel("unix:" + plugin.endpoint().string(), grpc::InsecureChannelCredentials());
  auto stub = v1alpha1::DRAResourceHealth::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 30s);
  v1alpha1::NodeWatchResourcesRequest req;
  auto stream = stub->NodeWatchResources(&ctx, req);
  v1alpha1::NodeWatchResourcesResponse r;
  REQUIRE(stream->Read(&r));
  REQUIRE(static_cast<size_t>(r.devices_size()) == devices.size());
  for (const auto& d : r.devices()) {
    CHECK(d.device().pool_name() == "gpu-node-1");
    CHECK(d.health() == v1alpha1::HEALTHY);
    CHECK(d.health_check_timeout_seconds() == 60);
    CHECK(d.last_updated_time() > 0);
  }

  // Rail 0's port goes down: the next message has its PF and VFs unhealthy, with the reason.
  std::ofstream(fx.sys("bus/pci/devices/0000:19:00.0/infiniband/mlx5_0/ports/1/state"))
      << "1: DOWN\n";
  devices = build_devices(node, check_health(fx.sysfs(), node));
  const auto t0 = std::chrono::steady_clock::now();
  plugin.update_node(std::make_shared<const topo::Node>(node), devices);
  REQUIRE(stream->Read(&r));
  CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  int unhealthy = 0;
  for (const auto& d : r.devices())
    if (d.health() == v1alpha1::UNHEALTHY) {
      ++unhealthy;
      CHECK(d.message() == "port mlx5_0/1 is not ACTIVE");
    }
  CHECK(unhealthy == 1 + 4);  // the PF and its 4 VFs

  // The plugin stops: the stream ends rather than holding the shutdown.
  const auto t1 = std::chrono::steady_clock::now();
  plugin.stop();
  CHECK(std::chrono::steady_clock::now() - t1 < 3s);
  while (stream->Read(&r)) {
  }
  CHECK(stream->Finish().ok());
}
