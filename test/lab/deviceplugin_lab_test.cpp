// railyard-device-plugin on a lab node (test/lab/deviceplugin_test.sh runs this inside the VM):
// the node's real sysfs, soft-RoCE rails on PCI NICs, a kubelet stand-in. Allocate must hand out
// device nodes that exist, and a rail whose link goes down must turn Unhealthy within 1 s, then
// Healthy again once its port is back.
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>

#include "test/support/deviceplugin_rig.h"
#include "test/support/temp_dir.h"

using namespace railyard::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Reads the stream until `want` is the health of device `id`; false at the deadline.
bool wait_health(grpc::ClientReader<v1beta1::ListAndWatchResponse>& reader, const std::string& id,
                 const std::string& want) {
  v1beta1::ListAndWatchResponse r;
  while (reader.Read(&r))
    for (const auto& d : r.devices())
      if (d.id() == id && d.health() == want) return true;
  return false;
}

}  // namespace

TEST_CASE(
    "on a lab node: Allocate hands out real device nodes; a rail's link down is Unhealthy "
    "within 1 s",
    "[lab]") {
  TempDir dir;
  const fs::path kubelet = dir.path() / "kubelet";
  fs::create_directories(kubelet);
  std::ofstream(dir.path() / "config.json")
      << R"({"resourceList": [{"resourceName": "rail", "kind": "pf", "perRail": true}]})";
  FakeKubelet k(kubelet);
  PluginProcess plugin({"--sysfs-root", "/", "--kubelet-dir", kubelet.string(), "--config",
                        (dir.path() / "config.json").string(), "--devinfo-dir",
                        (dir.path() / "devinfo").string(), "--metrics-addr", ""},
                       dir.path() / "plugin.log");
  const auto regs = k.wait_for(2, 20s);
  INFO(plugin.log());
  REQUIRE(regs.size() == 2);

  auto stub = plugin_client(kubelet / "railyard.io_rail1.sock");
  grpc::ClientContext watch_ctx;
  watch_ctx.set_deadline(std::chrono::system_clock::now() + 60s);
  auto reader = stub->ListAndWatch(&watch_ctx, v1beta1::Empty{});
  v1beta1::ListAndWatchResponse first;
  REQUIRE(reader->Read(&first));
  REQUIRE(first.devices_size() == 1);
  const std::string id = first.devices(0).id();
  CHECK(first.devices(0).health() == "Healthy");

  v1beta1::AllocateRequest req;
  req.add_container_requests()->add_devices_ids(id);
  v1beta1::AllocateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  REQUIRE(stub->Allocate(&ctx, req, &resp).ok());
  REQUIRE(resp.container_responses_size() == 1);
  bool uverbs = false, rdma_cm = false;
  for (const auto& d : resp.container_responses(0).devices()) {
    INFO(d.host_path());
    CHECK(exists(d.host_path()));
    CHECK(d.container_path() == d.host_path());
    uverbs |= d.host_path().rfind("/dev/infiniband/uverbs", 0) == 0;
    rdma_cm |= d.host_path() == "/dev/infiniband/rdma_cm";
  }
  CHECK(uverbs);
  CHECK(rdma_cm);

  // The rail's link goes down: its rxe port follows, and the device turns Unhealthy.
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(std::system("ip link set eth1 down") == 0);
  REQUIRE(wait_health(*reader, id, "Unhealthy"));
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO("Unhealthy after " << std::chrono::duration<double>(took).count() << " s");
  CHECK(took < 1s);
  // Back up: e1000e renegotiates (1-3 s), then the port is ACTIVE again.
  REQUIRE(std::system("ip link set eth1 up") == 0);
  CHECK(wait_health(*reader, id, "Healthy"));
  watch_ctx.TryCancel();
  CHECK(plugin.stop(SIGTERM, 2s) == 0);
}
