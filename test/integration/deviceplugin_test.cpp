// railyard-device-plugin against a kubelet stand-in: registration, ListAndWatch, health pushes,
// Allocate, GetPreferredAllocation, kubelet restarts, re-discovery, bad input, shutdown. The
// plugin runs as a child process on generated sysfs fixtures, as the DaemonSet runs it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/atomic_file.h"
#include "common/rail_findings.h"
#include "test/support/deviceplugin_rig.h"
#include "test/support/fixture_node.h"
#include "test/support/run.h"

using namespace railyard::testing;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kPlugin = RAILYARD_BIN_DIR "/railyard-device-plugin";

// dgx-h100 with the InfiniBand NICs as rails: 8 bundles; VFs on rail 0 (mlx5_0) and rail 4.
const std::vector<std::string> kBundleIds = {"0000:19:00.0", "0000:3b:00.0", "0000:4c:00.0",
                                             "0000:5d:00.0", "0000:9b:00.0", "0000:bb:00.0",
                                             "0000:cb:00.0", "0000:db:00.0"};
const std::vector<std::string> kRail0Vfs = {"0000:19:00.2", "0000:19:00.3", "0000:19:00.4",
                                            "0000:19:00.5"};

struct Rig {
  GeneratedFixture fx;
  TempDir dir;
  fs::path kubelet_dir = dir.path() / "kubelet";
  fs::path devinfo_dir = dir.path() / "devinfo";
  fs::path config = dir.path() / "config.json";
  fs::path findings = dir.path() / "validation" / "findings.json";
  std::string metrics_addr;  // empty: no metrics endpoint
  std::unique_ptr<FakeKubelet> kubelet;
  std::unique_ptr<PluginProcess> plugin;

  explicit Rig(const std::string& fixture = "dgx-h100") : fx(fixture) {
    fs::create_directories(kubelet_dir);
    std::ofstream(dir.path() / "rails.json") << R"({"selectors": {"linkTypes": ["infiniband"]}})";
  }
  std::vector<std::string> args(bool with_config) const {
    std::vector<std::string> a = {"--sysfs-root",
                                  fx.root().string(),
                                  "--rails",
                                  (dir.path() / "rails.json").string(),
                                  "--kubelet-dir",
                                  kubelet_dir.string(),
                                  "--devinfo-dir",
                                  devinfo_dir.string(),
                                  "--metrics-addr",
                                  metrics_addr,
                                  "--validation-findings",
                                  findings.string()};
    if (with_config) a.insert(a.end(), {"--config", config.string()});
    return a;
  }
  // Starts the kubelet stand-in and the plugin; returns once `n` resources registered.
  std::vector<v1beta1::RegisterRequest> start(size_t n, bool with_config = false) {
    kubelet = std::make_unique<FakeKubelet>(kubelet_dir);
    auto a = args(with_config);
    plugin = std::make_unique<PluginProcess>(a, dir.path() / "plugin.log");
    auto regs = kubelet->wait_for(n, 10s);
    INFO(plugin->log());
    REQUIRE(regs.size() == n);
    return regs;
  }
  std::unique_ptr<v1beta1::DevicePlugin::Stub> client(const std::string& resource) const {
    std::string s = resource;
    std::replace(s.begin(), s.end(), '/', '_');
    return plugin_client(kubelet_dir / (s + ".sock"));
  }
  // The metrics port the kernel chose, from the log.
  std::string metrics_port() const {
    const std::string log = plugin->log();
    const auto at = log.find("/healthz on port ");
    REQUIRE(at != std::string::npos);
    return log.substr(at + 17, log.find('\n', at) - at - 17);
  }
  // What a restarting kubelet does first: it goes away and wipes its directory.
  void kubelet_goes_away() {
    kubelet->stop();
    for (const auto& e : fs::directory_iterator(kubelet_dir)) fs::remove(e.path());
  }
  // Replaces a sysfs file the way the kernel's value changes: all at once.
  void set_sysfs(const std::string& rel, const std::string& value) const {
    const fs::path p = fs::canonical(fx.sys(rel));
    std::ofstream(p.string() + ".new") << value << "\n";
    fs::rename(p.string() + ".new", p);
  }
};

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::map<std::string, std::pair<std::string, int>> by_id(const v1beta1::ListAndWatchResponse& r) {
  std::map<std::string, std::pair<std::string, int>> out;
  for (const auto& d : r.devices())
    out[d.id()] = {d.health(),
                   d.topology().nodes_size() ? static_cast<int>(d.topology().nodes(0).id()) : -1};
  return out;
}

// A ListAndWatch stream as the kubelet holds one, ended (cancelled) when it goes out of scope.
struct Watch {
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReader<v1beta1::ListAndWatchResponse>> reader;
  Watch(std::unique_ptr<v1beta1::DevicePlugin::Stub> s, std::chrono::seconds deadline)
      : stub(std::move(s)) {
    ctx.set_deadline(std::chrono::system_clock::now() + deadline);
    reader = stub->ListAndWatch(&ctx, v1beta1::Empty{});
  }
  ~Watch() { ctx.TryCancel(); }
  bool next(v1beta1::ListAndWatchResponse& r) { return reader->Read(&r); }
};

v1beta1::ListAndWatchResponse first_list(std::unique_ptr<v1beta1::DevicePlugin::Stub> stub) {
  Watch w(std::move(stub), 5s);
  v1beta1::ListAndWatchResponse r;
  REQUIRE(w.next(r));
  return r;
}

grpc::Status allocate(v1beta1::DevicePlugin::Stub& stub,
                      const std::vector<std::vector<std::string>>& containers,
                      v1beta1::AllocateResponse& out) {
  v1beta1::AllocateRequest req;
  for (const auto& ids : containers) {
    auto* c = req.add_container_requests();
    for (const auto& id : ids) c->add_devices_ids(id);
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  return stub.Allocate(&ctx, req, &out);
}

std::vector<std::string> preferred(v1beta1::DevicePlugin::Stub& stub,
                                   const std::vector<std::string>& available,
                                   const std::vector<std::string>& must, int size,
                                   grpc::Status* status = nullptr) {
  v1beta1::PreferredAllocationRequest req;
  auto* c = req.add_container_requests();
  for (const auto& id : available) c->add_available_deviceids(id);
  for (const auto& id : must) c->add_must_include_deviceids(id);
  c->set_allocation_size(size);
  v1beta1::PreferredAllocationResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  const auto st = stub.GetPreferredAllocation(&ctx, req, &resp);
  if (status) *status = st;
  if (!st.ok() || resp.container_responses_size() != 1) return {};
  const auto& ids = resp.container_responses(0).deviceids();
  return {ids.begin(), ids.end()};
}

std::string uverbs_of(const Rig& rig, const std::string& pci) {
  for (const auto& e :
       fs::directory_iterator(rig.fx.sys("bus/pci/devices/" + pci + "/infiniband_verbs")))
    return "/dev/infiniband/" + e.path().filename().string();
  return "";
}

}  // namespace

TEST_CASE("registers every pool with the kubelet's fields", "[deviceplugin]") {
  Rig rig;
  const auto regs = rig.start(3);
  std::set<std::string> names;
  for (const auto& r : regs) {
    CHECK(r.version() == "v1beta1");
    CHECK(r.endpoint().find('/') == std::string::npos);
    CHECK(r.endpoint().ends_with(".sock"));
    CHECK(fs::exists(rig.kubelet_dir / r.endpoint()));
    CHECK(r.options().get_preferred_allocation_available());
    CHECK_FALSE(r.options().pre_start_required());
    names.insert(r.resource_name());
  }
  // Rails without VFs have no pool (a warning says so); bundles and the two VF rails do.
  CHECK(names ==
        std::set<std::string>{"railyard.io/bundle", "railyard.io/rail0", "railyard.io/rail4"});
  CHECK(rig.plugin->log().find("railyard.io/rail1: no device matches") != std::string::npos);
}

TEST_CASE("ListAndWatch lists each pool's devices with their NUMA node", "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  const auto bundles = by_id(first_list(rig.client("railyard.io/bundle")));
  REQUIRE(bundles.size() == 8);
  for (size_t i = 0; i < kBundleIds.size(); ++i) {
    INFO(kBundleIds[i]);
    REQUIRE(bundles.count(kBundleIds[i]));
    CHECK(bundles.at(kBundleIds[i]).first == "Healthy");
    CHECK(bundles.at(kBundleIds[i]).second == (i < 4 ? 0 : 1));
  }
  const auto rail0 = by_id(first_list(rig.client("railyard.io/rail0")));
  REQUIRE(rail0.size() == 4);
  for (const auto& id : kRail0Vfs) CHECK(rail0.at(id) == std::pair<std::string, int>{"Healthy", 0});
}

TEST_CASE("ListAndWatch without NUMA information sends no TopologyInfo", "[deviceplugin]") {
  Rig rig("cloud-vm");
  std::ofstream(rig.dir.path() / "rails.json") << "{}";
  rig.start(1);  // no VFs: the bundle pool alone
  const auto list = first_list(rig.client("railyard.io/bundle"));
  REQUIRE(list.devices_size() == 2);
  for (const auto& d : list.devices()) CHECK_FALSE(d.has_topology());
}

TEST_CASE("a port going down is pushed within a second, and its recovery too", "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  Watch bundles(rig.client("railyard.io/bundle"), 20s), vfs(rig.client("railyard.io/rail0"), 20s);
  v1beta1::ListAndWatchResponse r;
  REQUIRE(bundles.next(r));
  REQUIRE(vfs.next(r));

  const std::string port = "bus/pci/devices/0000:19:00.0/infiniband/mlx5_0/ports/1/state";
  auto t0 = std::chrono::steady_clock::now();
  rig.set_sysfs(port, "1: DOWN");
  REQUIRE(bundles.next(r));
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  auto devs = by_id(r);
  CHECK(devs.at("0000:19:00.0").first == "Unhealthy");
  for (size_t i = 1; i < kBundleIds.size(); ++i) CHECK(devs.at(kBundleIds[i]).first == "Healthy");
  // The rail's VFs depend on the PF's port: they go down with it.
  REQUIRE(vfs.next(r));
  for (const auto& [id, h] : by_id(r)) CHECK(h.first == "Unhealthy");
  CHECK(rig.plugin->log().find("port mlx5_0/1 is not ACTIVE") != std::string::npos);

  t0 = std::chrono::steady_clock::now();
  rig.set_sysfs(port, "4: ACTIVE");
  REQUIRE(bundles.next(r));
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  for (const auto& [id, h] : by_id(r)) CHECK(h.first == "Healthy");
  REQUIRE(vfs.next(r));
  for (const auto& [id, h] : by_id(r)) CHECK(h.first == "Healthy");
}

TEST_CASE("a rail the validation failed is Unhealthy, its bundle and VFs, until a run passes",
          "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  Watch bundles(rig.client("railyard.io/bundle"), 20s), vfs(rig.client("railyard.io/rail0"), 20s);
  v1beta1::ListAndWatchResponse r;
  REQUIRE(bundles.next(r));
  REQUIRE(vfs.next(r));

  railyard::RailFindings failed{"n1", "2026-12-07T18:00:00Z", "fail", {{0, "slow: busbw 2 GB/s"}}};
  railyard::write_file_atomically(rig.findings, railyard::rail_findings_json(failed));
  REQUIRE(bundles.next(r));
  auto devs = by_id(r);
  CHECK(devs.at("0000:19:00.0").first == "Unhealthy");
  for (size_t i = 1; i < kBundleIds.size(); ++i) CHECK(devs.at(kBundleIds[i]).first == "Healthy");
  REQUIRE(vfs.next(r));
  for (const auto& [id, h] : by_id(r)) CHECK(h.first == "Unhealthy");
  CHECK(rig.plugin->log().find("rail 0 failed validation at 2026-12-07T18:00:00Z: slow") !=
        std::string::npos);

  // A file that is not the format changes nothing: the last good findings stay.
  railyard::write_file_atomically(rig.findings, "{\"failedRails\": [{\"rail\": -3}]}");
  const auto t0 = std::chrono::steady_clock::now();
  while (rig.plugin->log().find("keeping the last good ones") == std::string::npos &&
         std::chrono::steady_clock::now() - t0 < 5s)
    std::this_thread::sleep_for(50ms);
  CHECK(rig.plugin->log().find("rail -3 is out of range; keeping the last good ones") !=
        std::string::npos);

  railyard::RailFindings passed{"n1", "2026-12-07T18:10:00Z", "pass", {}};
  railyard::write_file_atomically(rig.findings, railyard::rail_findings_json(passed));
  REQUIRE(bundles.next(r));
  for (const auto& [id, h] : by_id(r)) CHECK(h.first == "Healthy");
  REQUIRE(vfs.next(r));
  for (const auto& [id, h] : by_id(r)) CHECK(h.first == "Healthy");
}

TEST_CASE("a RoCE PF without carrier makes its device unhealthy, and back", "[deviceplugin]") {
  Rig rig;
  std::ofstream(rig.config)
      << R"({"resourceList": [{"resourceName": "roce", "kind": "pf", "selectors": {"linkTypes": ["ethernet"]}}]})";
  rig.start(1, true);
  Watch watch(rig.client("railyard.io/roce"), 20s);
  v1beta1::ListAndWatchResponse r;
  REQUIRE(watch.next(r));
  REQUIRE(r.devices_size() == 4);  // the two dual-port Ethernet cards
  const std::string pf =
      fs::canonical(rig.fx.sys("class/net/enp60s0f0np0/../..")).filename().string();
  rig.set_sysfs("class/net/enp60s0f0np0/operstate", "down");
  REQUIRE(watch.next(r));
  for (const auto& [id, h] : by_id(r)) CHECK(h.first == (id == pf ? "Unhealthy" : "Healthy"));
  CHECK(rig.plugin->log().find("netdev enp60s0f0np0 has no carrier") != std::string::npos);
  rig.set_sysfs("class/net/enp60s0f0np0/operstate", "up");
  REQUIRE(watch.next(r));
  CHECK(by_id(r).at(pf).first == "Healthy");
}

TEST_CASE("a netlink link event starts a health pass before the timer would", "[deviceplugin]") {
  Rig rig;
  // A timer that never fires within the test: only the netlink event can start the pass.
  std::ofstream(rig.config)
      << R"({"healthPollMs": 60000, "resourceList": [{"resourceName": "bundle", "kind": "bundle"}]})";
  rig.start(1, true);
  Watch watch(rig.client("railyard.io/bundle"), 10s);
  v1beta1::ListAndWatchResponse r;
  REQUIRE(watch.next(r));
  rig.set_sysfs("bus/pci/devices/0000:19:00.0/infiniband/mlx5_0/ports/1/state", "1: DOWN");
  // A link appearing on the host (as a VF's netdev does) is the event.
  const std::string a = "rydp" + std::to_string(::getpid()) + "a",
                    b = a.substr(0, a.size() - 1) + "b";
  struct Link {
    std::string name;
    ~Link() { run({"ip", "link", "del", name}); }
  } link{a};
  REQUIRE(run({"ip", "link", "add", a, "type", "veth", "peer", "name", b}).exit_code == 0);
  REQUIRE(watch.next(r));
  CHECK(by_id(r).at("0000:19:00.0").first == "Unhealthy");
}

TEST_CASE("a GPU that disappears makes its bundle unhealthy", "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  Watch watch(rig.client("railyard.io/bundle"), 20s);
  v1beta1::ListAndWatchResponse r;
  REQUIRE(watch.next(r));
  const fs::path link = rig.fx.sys("bus/pci/devices/0000:ca:00.0");
  const fs::path target = fs::read_symlink(link);
  fs::remove(link);  // as when the GPU falls off the bus
  REQUIRE(watch.next(r));
  CHECK(by_id(r).at("0000:cb:00.0").first == "Unhealthy");
  fs::create_symlink(target, link);
  REQUIRE(watch.next(r));
  CHECK(by_id(r).at("0000:cb:00.0").first == "Healthy");
}

TEST_CASE("Allocate leaves out rdma_cm on a node without it (rdma_ucm not loaded)",
          "[deviceplugin]") {
  Rig rig;
  // As on a node where nothing loaded rdma_ucm: a device node the runtime cannot find would
  // fail the container, as sriov-network-device-plugin also checks before handing it out.
  fs::remove(rig.fx.root() / "sys/class/misc/rdma_cm");
  rig.start(3);
  auto stub = rig.client("railyard.io/bundle");
  v1beta1::AllocateResponse resp;
  REQUIRE(allocate(*stub, {{"0000:3b:00.0"}}, resp).ok());
  REQUIRE(resp.container_responses_size() == 1);
  const auto& c = resp.container_responses(0);
  std::set<std::string> paths;
  for (const auto& d : c.devices()) paths.insert(d.host_path());
  CHECK(paths.count(uverbs_of(rig, "0000:3b:00.0")) == 1);
  CHECK(paths.count("/dev/infiniband/rdma_cm") == 0);
  const json info = json::parse(c.envs().at("PCIDEVICE_RAILYARD_IO_BUNDLE_INFO"));
  CHECK(info.at("0000:3b:00.0").at("rdma").at("rdma_dev") == "mlx5_3");
  CHECK_FALSE(info.at("0000:3b:00.0").at("rdma").contains("rdma_cm"));
}

TEST_CASE("Allocate hands out RDMA and GPU device nodes, env and device-info files",
          "[deviceplugin]") {
  Rig rig;
  // The NVIDIA driver's own numbering wins over the index when it publishes one.
  fs::create_directories(rig.fx.root() / "proc/driver/nvidia/gpus/0000:3a:00.0");
  std::ofstream(rig.fx.root() / "proc/driver/nvidia/gpus/0000:3a:00.0/information")
      << "Model: NVIDIA H100 80GB HBM3\nDevice Minor: 6\n";
  rig.start(3);
  auto stub = rig.client("railyard.io/bundle");
  v1beta1::AllocateResponse resp;
  REQUIRE(allocate(*stub, {{"0000:3b:00.0", "0000:19:00.0"}}, resp).ok());
  REQUIRE(resp.container_responses_size() == 1);
  const auto& c = resp.container_responses(0);
  const auto& env = c.envs();
  CHECK(env.at("NCCL_IB_HCA") == "=mlx5_0:1,mlx5_3:1");
  CHECK(env.at("NVIDIA_VISIBLE_DEVICES") == "0,1");
  CHECK(env.at("PCIDEVICE_RAILYARD_IO_BUNDLE") == "0000:19:00.0,0000:3b:00.0");
  const json info = json::parse(env.at("PCIDEVICE_RAILYARD_IO_BUNDLE_INFO"));
  CHECK(info.at("0000:19:00.0").at("generic").at("deviceID") == "0000:19:00.0");
  CHECK(info.at("0000:19:00.0").at("rdma").at("rdma_dev") == "mlx5_0");
  CHECK(info.at("0000:19:00.0").at("rdma").at("uverbs") == uverbs_of(rig, "0000:19:00.0"));
  CHECK(info.at("0000:3b:00.0").at("rdma").at("rdma_cm") == "/dev/infiniband/rdma_cm");

  std::set<std::string> paths;
  for (const auto& d : c.devices()) {
    CHECK(d.host_path() == d.container_path());
    CHECK(d.permissions() == "rwm");
    paths.insert(d.host_path());
  }
  CHECK(paths == std::set<std::string>{uverbs_of(rig, "0000:19:00.0"),
                                       uverbs_of(rig, "0000:3b:00.0"), "/dev/infiniband/rdma_cm",
                                       "/dev/nvidia0", "/dev/nvidia6", "/dev/nvidiactl",
                                       "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"});
  CHECK(c.cdi_devices_size() == 0);

  const fs::path file = rig.devinfo_dir / "railyard.io-bundle-0000:3b:00.0-device.json";
  REQUIRE(fs::exists(file));
  CHECK((fs::status(file).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read));
  std::ifstream in(file);
  const json devinfo = json::parse(in);
  CHECK(devinfo == json{{"type", "pci"},
                        {"version", "1.1.0"},
                        {"pci", {{"pci-address", "0000:3b:00.0"}, {"rdma-device", "mlx5_3"}}}});
}

TEST_CASE("Allocate from a VF pool names the PF and leaves NCCL_IB_HCA alone", "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  v1beta1::AllocateResponse resp;
  REQUIRE(
      allocate(*rig.client("railyard.io/rail0"), {{"0000:19:00.3"}, {"0000:19:00.2"}}, resp).ok());
  REQUIRE(resp.container_responses_size() == 2);
  const auto& env = resp.container_responses(0).envs();
  CHECK(env.at("PCIDEVICE_RAILYARD_IO_RAIL0") == "0000:19:00.3");
  CHECK(env.count("NCCL_IB_HCA") == 0);
  CHECK(env.count("NVIDIA_VISIBLE_DEVICES") == 0);
  CHECK(resp.container_responses(1).envs().at("PCIDEVICE_RAILYARD_IO_RAIL0") == "0000:19:00.2");
  std::ifstream in(rig.devinfo_dir / "railyard.io-rail0-0000:19:00.3-device.json");
  const json devinfo = json::parse(in);
  CHECK(devinfo.at("pci").at("pf-pci-address") == "0000:19:00.0");
  CHECK(devinfo.at("pci").at("rdma-device").get<std::string>().starts_with("mlx5_"));
}

TEST_CASE("CDI mode names GPUs as CDI devices instead of device nodes", "[deviceplugin]") {
  Rig rig;
  std::ofstream(rig.config)
      << R"({"gpuDevices": "cdi", "resourceList": [{"resourceName": "gpu-rail", "kind": "bundle"}]})";
  rig.start(1, true);
  v1beta1::AllocateResponse resp;
  REQUIRE(allocate(*rig.client("railyard.io/gpu-rail"), {{"0000:9b:00.0"}}, resp).ok());
  const auto& c = resp.container_responses(0);
  REQUIRE(c.cdi_devices_size() == 1);
  CHECK(c.cdi_devices(0).name() == "nvidia.com/gpu=4");
  for (const auto& d : c.devices()) CHECK(d.host_path().find("nvidia") == std::string::npos);
}

TEST_CASE("bad RPC input is a gRPC error, leaves nothing behind, and the server keeps serving",
          "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  auto stub = rig.client("railyard.io/bundle");
  v1beta1::AllocateResponse resp;
  // One good ID and one unknown: no partial allocation, no device-info file.
  auto st = allocate(*stub, {{"0000:19:00.0", "0000:99:00.0"}}, resp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message().find("0000:99:00.0") != std::string::npos);
  CHECK_FALSE(fs::exists(rig.devinfo_dir / "railyard.io-bundle-0000:19:00.0-device.json"));
  resp.Clear();
  CHECK(allocate(*stub, std::vector<std::vector<std::string>>{{}}, resp).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  resp.Clear();
  CHECK(allocate(*stub, {{"0000:19:00.0", "0000:19:00.0"}}, resp).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  // A VF of rail 0 is not in the bundle pool.
  resp.Clear();
  CHECK(allocate(*stub, {{kRail0Vfs[0]}}, resp).error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status pst;
  preferred(*stub, {kBundleIds[0]}, {}, 2, &pst);
  CHECK(pst.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  preferred(*stub, {kBundleIds[0], kBundleIds[1]}, {kBundleIds[2]}, 1, &pst);
  CHECK(pst.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  resp.Clear();
  REQUIRE(allocate(*stub, {{"0000:19:00.0"}}, resp).ok());
  CHECK(resp.container_responses(0).envs().at("NCCL_IB_HCA") == "=mlx5_0:1");
}

TEST_CASE("GetPreferredAllocation packs by rail, NUMA node and PCIe path", "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  auto stub = rig.client("railyard.io/bundle");
  SECTION("8 of 8") {
    CHECK(preferred(*stub, kBundleIds, {}, 8) == kBundleIds);
  }
  SECTION("4 of 8 with must_include stays in that device's NUMA node") {
    CHECK(preferred(*stub, kBundleIds, {"0000:bb:00.0"}, 4) ==
          std::vector<std::string>{"0000:9b:00.0", "0000:bb:00.0", "0000:cb:00.0", "0000:db:00.0"});
    CHECK(preferred(*stub, kBundleIds, {"0000:3b:00.0"}, 2) ==
          std::vector<std::string>{"0000:19:00.0", "0000:3b:00.0"});
  }
  SECTION("fragmented: the one NUMA node that still has 4 free wins") {
    const std::vector<std::string> avail = {"0000:19:00.0", "0000:4c:00.0", "0000:5d:00.0",
                                            "0000:9b:00.0", "0000:bb:00.0", "0000:cb:00.0",
                                            "0000:db:00.0"};
    CHECK(preferred(*stub, avail, {}, 4) ==
          std::vector<std::string>{"0000:9b:00.0", "0000:bb:00.0", "0000:cb:00.0", "0000:db:00.0"});
    CHECK(preferred(*stub, avail, {}, 3) ==
          std::vector<std::string>{"0000:19:00.0", "0000:4c:00.0", "0000:5d:00.0"});
  }
}

TEST_CASE("GetPreferredAllocation spreads a multi-rail pool over rails first", "[deviceplugin]") {
  Rig rig;
  std::ofstream(rig.config) << R"({"resourceList": [{"resourceName": "any-vf", "kind": "vf"}]})";
  rig.start(1, true);
  auto stub = rig.client("railyard.io/any-vf");
  const auto list = first_list(rig.client("railyard.io/any-vf"));
  std::vector<std::string> all;
  for (const auto& d : list.devices()) all.push_back(d.id());
  REQUIRE(all.size() == 8);
  // Two VFs: one per rail beats two on one rail, though the rails sit in two NUMA nodes.
  CHECK(preferred(*stub, all, {}, 2) == std::vector<std::string>{"0000:19:00.2", "0000:9b:00.2"});
  CHECK(preferred(*stub, all, {"0000:9b:00.4"}, 2) ==
        std::vector<std::string>{"0000:19:00.2", "0000:9b:00.4"});
}

TEST_CASE("concurrent Allocate calls are all served whole", "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  std::atomic<int> ok{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto stub = rig.client("railyard.io/bundle");
      const std::string id = kBundleIds[static_cast<size_t>(t)];
      for (int i = 0; i < 40; ++i) {
        v1beta1::AllocateResponse resp;
        if (!allocate(*stub, {{id}}, resp).ok()) {
          ++wrong;
          continue;
        }
        const auto& env = resp.container_responses(0).envs();
        (env.at("PCIDEVICE_RAILYARD_IO_BUNDLE") == id &&
                 env.at("NVIDIA_VISIBLE_DEVICES") == std::to_string(t)
             ? ok
             : wrong)++;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(ok == 8 * 40);
  CHECK(wrong == 0);
  for (const auto& id : kBundleIds)
    CHECK(fs::exists(rig.devinfo_dir / ("railyard.io-bundle-" + id + "-device.json")));
}

TEST_CASE("20 kubelet restarts in a row: every resource registered again within 1 s, every time",
          "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  REQUIRE(rig.kubelet->wait_for_streams(3, 5s) == 3);
  for (int i = 0; i < 20; ++i) {
    // A restarting kubelet: it goes away, wipes the directory, comes back, and dials back each
    // plugin inside Register (GetDevicePluginOptions, then ListAndWatch).
    rig.kubelet_goes_away();
    const auto t0 = std::chrono::steady_clock::now();
    rig.kubelet = std::make_unique<FakeKubelet>(rig.kubelet_dir);
    const auto regs = rig.kubelet->wait_for(3, 5s);
    const auto took = std::chrono::steady_clock::now() - t0;
    INFO("restart " << i << ": " << std::chrono::duration<double>(took).count() << " s\n"
                    << rig.plugin->log());
    REQUIRE(regs.size() >= 3);
    CHECK(took < 1s);
    CHECK(rig.kubelet->wait_for_streams(3, 2s) == 3);
    for (const auto& r : regs) CHECK(fs::exists(rig.kubelet_dir / r.endpoint()));
  }
  CHECK(first_list(rig.client("railyard.io/bundle")).devices_size() == 8);
}

TEST_CASE("a kubelet.sock that refuses at first, then a kubelet listening: registered within 1 s",
          "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  for (int i = 0; i < 3; ++i) {
    rig.kubelet_goes_away();
    // A socket that exists but does not listen yet: the plugin's registration is refused.
    const fs::path sock = rig.kubelet_dir / "kubelet.sock";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, sock.c_str(), sizeof sa.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    const size_t refusals = count_of(rig.plugin->log(), "registering railyard.io/bundle with");
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (count_of(rig.plugin->log(), "registering railyard.io/bundle with") == refusals &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);  // polls the plugin's log for the refusal, bounded
    ::close(fd);
    fs::remove(sock);
    const auto t0 = std::chrono::steady_clock::now();
    rig.kubelet = std::make_unique<FakeKubelet>(rig.kubelet_dir);
    const auto regs = rig.kubelet->wait_for(3, 5s);
    const auto took = std::chrono::steady_clock::now() - t0;
    INFO("round " << i << ": " << std::chrono::duration<double>(took).count() << " s\n"
                  << rig.plugin->log());
    REQUIRE(regs.size() >= 3);
    CHECK(took < 1s);
  }
}

TEST_CASE("the plugin serves its socket again when it is deleted alone", "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  fs::remove(rig.kubelet_dir / "railyard.io_rail4.sock");
  const auto regs = rig.kubelet->wait_for(4, 5s);
  INFO(rig.plugin->log());
  REQUIRE(regs.size() == 4);
  CHECK(regs.back().resource_name() == "railyard.io/rail4");
  CHECK(first_list(rig.client("railyard.io/rail4")).devices_size() == 4);
}

TEST_CASE("VFs created later become a new pool without a restart", "[deviceplugin]") {
  Rig rig;
  rig.start(3);
  // The same node after `echo 2 > sriov_numvfs` on mlx5_11 (rail 7): generated whole, copied
  // over the running fixture.
  std::ifstream in(fixture_description("dgx-h100"));
  json desc = json::parse(in, nullptr, true, true);
  for (auto& hb : desc["host_bridges"])
    if (hb["id"] == "0000:d7") hb["ports"][0]["switch"][1]["nic"]["vfs"] = 2;
  const fs::path later = rig.dir.path() / "later";
  std::ofstream(rig.dir.path() / "later.json") << desc.dump();
  REQUIRE(run({RAILYARD_BIN_DIR "/railyard-fixture", (rig.dir.path() / "later.json").string(),
               later.string()})
              .exit_code == 0);
  REQUIRE(run({"cp", "-a", "--remove-destination", later.string() + "/.", rig.fx.root().string()})
              .exit_code == 0);
  const auto regs = rig.kubelet->wait_for(4, 5s);
  INFO(rig.plugin->log());
  REQUIRE(regs.size() == 4);
  CHECK(regs.back().resource_name() == "railyard.io/rail7");
  // A discovery in the middle of the copy may have seen one VF: the next pass sees both.
  Watch watch(rig.client("railyard.io/rail7"), 5s);
  v1beta1::ListAndWatchResponse r;
  while (watch.next(r) && r.devices_size() != 2) {
  }
  CHECK(r.devices_size() == 2);
}

TEST_CASE("a changed config file, or SIGHUP, re-discovers without a restart", "[deviceplugin]") {
  Rig rig;
  std::ofstream(rig.config)
      << R"({"resourceList": [{"resourceName": "bundle", "kind": "bundle"}]})";
  rig.start(1, true);
  {
    std::ofstream(rig.config.string() + ".new")
        << R"({"resourceList": [{"resourceName": "bundle", "kind": "bundle"}, {"resourceName": "r0", "kind": "vf", "selectors": {"rails": [0]}}]})";
    fs::rename(rig.config.string() + ".new", rig.config);
  }
  auto regs = rig.kubelet->wait_for(2, 5s);
  INFO(rig.plugin->log());
  REQUIRE(regs.size() == 2);
  CHECK(regs.back().resource_name() == "railyard.io/r0");
  // A bad edit keeps what is served. The loop handles the signal before the socket deletion
  // that follows it, so the re-registration that the deletion causes comes after the reload.
  std::ofstream(rig.config) << "{ not json";
  rig.plugin->signal(SIGHUP);
  fs::remove(rig.kubelet_dir / "railyard.io_r0.sock");
  regs = rig.kubelet->wait_for(3, 5s);
  REQUIRE(regs.size() == 3);
  CHECK(rig.plugin->log().find("keeping what is served") != std::string::npos);
  CHECK(first_list(rig.client("railyard.io/r0")).devices_size() == 4);
}

namespace {

// A TCP connection to the plugin's metrics port on loopback.
int connect_metrics(const std::string& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  return fd;
}

// GET `path` with the whole exchange bounded by `limit`; the status line and body, or "" when
// the answer did not come in time.
std::string http_get(const std::string& port, const std::string& path,
                     std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  const int fd = connect_metrics(port);
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: node\r\n\r\n";
  REQUIRE(::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
  std::string got;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1) {
      got.clear();
      break;
    }
    char b[4096];
    const ssize_t n = ::recv(fd, b, sizeof b, 0);
    if (n <= 0) break;
    got.append(b, static_cast<size_t>(n));
  }
  ::close(fd);
  return got;
}

}  // namespace

TEST_CASE("idle and trickling clients on the metrics port do not stall /healthz or /metrics",
          "[deviceplugin]") {
  Rig rig;
  rig.metrics_addr = "127.0.0.1:0";
  rig.start(3);
  const std::string port = rig.metrics_port();
  // 20 strangers connect and say nothing; one sends a request a byte at a time, forever.
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) idle.push_back(connect_metrics(port));
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const int fd = connect_metrics(port);
    const std::string slow = "GET /metrics HTTP/1.1\r\nX-Slow: " + std::string(10000, 'a');
    for (size_t i = 0; i < slow.size() && !stop; ++i) {
      if (::send(fd, &slow[i], 1, MSG_NOSIGNAL) != 1) break;
      std::this_thread::sleep_for(50ms);  // the trickle's pace, not a synchronisation
    }
    ::close(fd);
  });
  for (int probe = 0; probe < 5; ++probe) {
    const auto got = http_get(port, "/healthz", 1000ms);
    INFO("probe " << probe << ": " << got);
    CHECK(got.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(got.find("\r\n\r\nok\n") != std::string::npos);
  }
  // The kubelet saw the registrations before the plugin's first health pass published its
  // gauges: every scrape is answered in time, and one of them within 5 s carries them.
  const std::string want = "railyard_registered{resource=\"railyard.io/rail4\"} 1";
  std::string metrics;
  for (const auto until = std::chrono::steady_clock::now() + 5s;
       metrics.find(want) == std::string::npos && std::chrono::steady_clock::now() < until;) {
    metrics = http_get(port, "/metrics", 1000ms);
    REQUIRE(metrics.rfind("HTTP/1.1 200", 0) == 0);
  }
  INFO(metrics);
  CHECK(metrics.find(want) != std::string::npos);
  stop = true;
  trickle.join();
  for (int fd : idle) ::close(fd);
}

TEST_CASE("more connections than the metrics server holds: the newest is served",
          "[deviceplugin]") {
  Rig rig;
  rig.metrics_addr = "127.0.0.1:0";
  rig.start(3);
  const std::string port = rig.metrics_port();
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(connect_metrics(port));
  const auto got = http_get(port, "/healthz", 1000ms);
  INFO(got);
  CHECK(got.rfind("HTTP/1.1 200", 0) == 0);
  // The oldest strangers were let go to make room: the server closed them.
  pollfd p{idle.front(), POLLIN, 0};
  REQUIRE(::poll(&p, 1, 1000) == 1);
  char b;
  CHECK(::recv(idle.front(), &b, 1, 0) == 0);
  for (int fd : idle) ::close(fd);
}

TEST_CASE("SIGTERM with the kubelet's ListAndWatch streams open: exit 0 within 2 s, sockets gone",
          "[deviceplugin]") {
  Rig rig;
  rig.metrics_addr = "127.0.0.1:0";  // on, as the DaemonSet runs it
  const auto regs = rig.start(3);
  // A scraper that connected and has sent nothing yet holds the metrics thread in a read.
  const int scraper = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(rig.metrics_port())));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(scraper, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  // The kubelet holds one stream per resource (opened when it dialled back), and a second
  // client holds more, as a kubelet that reconnected would.
  REQUIRE(rig.kubelet->wait_for_streams(3, 5s) == 3);
  std::vector<std::unique_ptr<Watch>> held;
  for (const auto& r : regs) {
    held.push_back(std::make_unique<Watch>(rig.client(r.resource_name()), 60s));
    v1beta1::ListAndWatchResponse first;
    REQUIRE(held.back()->next(first));
  }
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(rig.plugin->stop(SIGTERM, 2s) == 0);
  INFO(rig.plugin->log());
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  for (const auto& r : regs) CHECK_FALSE(fs::exists(rig.kubelet_dir / r.endpoint()));
  CHECK(fs::exists(rig.kubelet_dir / "kubelet.sock"));  // the kubelet's own is left alone
  // Every stream saw its end rather than hanging on.
  for (auto& w : held) {
    v1beta1::ListAndWatchResponse r;
    CHECK_FALSE(w->next(r));
  }
  ::close(scraper);
}

TEST_CASE("SIGINT stops it the same way", "[deviceplugin]") {
  Rig rig;
  const auto regs = rig.start(3);
  REQUIRE(rig.kubelet->wait_for_streams(3, 5s) == 3);
  CHECK(rig.plugin->stop(SIGINT, 2s) == 0);
  for (const auto& r : regs) CHECK_FALSE(fs::exists(rig.kubelet_dir / r.endpoint()));
}

TEST_CASE("bad configuration stops the start with a clear error", "[deviceplugin]") {
  Rig rig;
  auto start_with = [&](const std::string& text) {
    std::ofstream(rig.config) << text;
    PluginProcess p(rig.args(true), rig.dir.path() / "bad.log");
    const int code = p.wait(10s);
    return std::make_pair(code, p.log());
  };
  auto [c1, l1] = start_with("{\"resourceList\": [");
  CHECK(c1 == 1);
  CHECK(l1.find("config.json: invalid JSON") != std::string::npos);
  auto [c2, l2] =
      start_with(R"({"resourceList": [{"resourceName": "x", "selectors": {"colour": ["red"]}}]})");
  CHECK(c2 == 1);
  CHECK(l2.find("unknown selector 'colour'") != std::string::npos);
  auto [c3, l3] = start_with(R"({"resourceList": [{"resourceName": "Not/Valid/Name"}]})");
  CHECK(c3 == 1);
  CHECK(l3.find("is not a valid extended resource name") != std::string::npos);
  auto [c4, l4] = start_with(
      R"({"resourceList": [{"resourceName": "a", "kind": "vf"}, {"resourceName": "b", "kind": "vf", "selectors": {"rails": [0]}}]})");
  CHECK(c4 == 1);
  CHECK(l4.find("matches both railyard.io/a and railyard.io/b") != std::string::npos);
  auto [c5, l5] = start_with(R"({"resourcePrefix": "kubernetes.io"})");
  CHECK(c5 == 1);
  auto [c6, l6] = start_with(R"({"healthPollMs": "fast"})");
  CHECK(c6 == 1);
  CHECK(l6.find("'healthPollMs' must be a number") != std::string::npos);
  const auto missing =
      run({kPlugin, "--config", (rig.dir.path() / "nope.json").string(), "--dry-run"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("nope.json: cannot be read") != std::string::npos);
}

TEST_CASE("a rails file named by RAILYARD_RAILS_FILE must be there, as for the other programs",
          "[deviceplugin]") {
  Rig rig;
  const std::string missing = (rig.dir.path() / "no-rails.json").string();
  auto dry_run = [&](const std::map<std::string, std::string>& env) {
    return run({kPlugin, "--sysfs-root", rig.fx.root().string(), "--dry-run"}, env);
  };
  // Before: the plugin fell back to every RDMA device as a rail (the storage NICs numbered among
  // them) where railyard topo, the CNI and the DRA driver refuse.
  const auto named = dry_run({{"RAILYARD_RAILS_FILE", missing}});
  CHECK(named.exit_code == 1);
  CHECK(named.err.find(missing + ": cannot read the rails file") != std::string::npos);
  const auto given = dry_run({{"RAILYARD_RAILS_FILE", (rig.dir.path() / "rails.json").string()}});
  INFO(given.err);
  CHECK(given.exit_code == 0);
}

TEST_CASE("a pool that matches nothing is a warning, and the others are served", "[deviceplugin]") {
  Rig rig;
  std::ofstream(rig.config)
      << R"({"resourceList": [{"resourceName": "bundle", "kind": "bundle"}, {"resourceName": "roce", "kind": "pf", "selectors": {"linkTypes": ["ethernet"], "vendors": ["8086"]}}]})";
  rig.start(1, true);
  CHECK(rig.plugin->log().find("railyard.io/roce: no device matches") != std::string::npos);
}

TEST_CASE("a dry run prints the resources and an example Allocate", "[deviceplugin]") {
  Rig rig;
  auto a = rig.args(false);
  a.insert(a.begin(), kPlugin);
  a.push_back("--dry-run");
  const auto r = run(a);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("railyard.io/bundle (bundle, 8 devices, socket railyard.io_bundle.sock)") !=
        std::string::npos);
  CHECK(r.out.find("0000:db:00.0  7     1     mlx5_11   0000:da:00.0   PIX   Healthy") !=
        std::string::npos);
  CHECK(r.out.find(
            "\"NCCL_IB_HCA\": "
            "\"=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1\"") !=
        std::string::npos);
  CHECK(fs::is_empty(rig.kubelet_dir));  // nothing served, nothing registered
}

TEST_CASE("/metrics and /healthz", "[deviceplugin]") {
  Rig rig;
  rig.metrics_addr = "127.0.0.1:0";
  rig.start(3);
  const std::string port = rig.metrics_port();
  v1beta1::AllocateResponse resp;
  REQUIRE(allocate(*rig.client("railyard.io/bundle"), {{kBundleIds[0], kBundleIds[1]}}, resp).ok());
  const auto metrics = run({"python3", "-c",
                            "import sys,urllib.request as u; print(u.urlopen('http://127.0.0.1:' + "
                            "sys.argv[1] + sys.argv[2]).read().decode())",
                            port, "/metrics"});
  REQUIRE(metrics.exit_code == 0);
  CHECK(
      metrics.out.find("railyard_devices{resource=\"railyard.io/bundle\",health=\"Healthy\"} 8") !=
      std::string::npos);
  CHECK(metrics.out.find("railyard_registered{resource=\"railyard.io/rail4\"} 1") !=
        std::string::npos);
  CHECK(metrics.out.find("railyard_rail_link_up{rail=\"7\",device=\"mlx5_11\"} 1") !=
        std::string::npos);
  CHECK(metrics.out.find("railyard_allocated_devices_total{resource=\"railyard.io/bundle\"} 2") !=
        std::string::npos);
  const auto healthz = run({"python3", "-c",
                            "import sys,urllib.request as u; print(u.urlopen('http://127.0.0.1:' + "
                            "sys.argv[1] + '/healthz').status)",
                            port});
  CHECK(healthz.out == "200\n");
}
