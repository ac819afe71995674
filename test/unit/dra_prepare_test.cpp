// NodePrepareResources and NodeUnprepareResources without the kubelet: a claim as the API server
// returns it, prepared on the DGX H100 fixture (CDI spec, the files railyard-cni reads, the
// record on disk), prepared again after a restart, unprepared twice; and the refusals.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "dra/handoff/handoff.h"
#include "dra/kubelet/kubelet_plugin.h"
#include "dra/publisher/network_status.h"
#include "dra/slices/health.h"
#include "dra/slices/prepare.h"
#include "test/support/dra_plugin_options.h"
#include "test/support/fixture_node.h"
#include "test/support/temp_dir.h"

using namespace railyard::dra;
using nlohmann::json;
using railyard::testing::GeneratedFixture;
namespace fs = std::filesystem;
namespace topo = railyard::topology;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

constexpr const char* kIbRails = R"({"selectors": {"linkTypes": ["infiniband"]}})";

struct Rig {
  GeneratedFixture fx{"dgx-h100"};
  topo::Node node;
  std::vector<Device> devices;
  Rig() {
    node =
        topo::discover(fx.sysfs(), topo::parse_rails_config(kIbRails, "test"), {.vf_ports = true});
    devices = build_devices(node, check_health(fx.sysfs(), node));
  }
  const Device& find(DeviceType t, int rail) const {
    for (const auto& d : devices)
      if (d.type == t && d.attributes["railyard.io/rail"]["int"] == rail) return d;
    FAIL("no device of that type on rail " << rail);
    throw;
  }
};

// A ResourceClaim as GET /apis/resource.k8s.io/v1/... returns it once the scheduler allocated
// it and reserved it for one pod.
json claim_json(const std::string& uid, const std::vector<std::pair<std::string, std::string>>& rd,
                const std::string& pool = "gpu-node-1") {
  json results = json::array();
  for (const auto& [req, dev] : rd)
    results.push_back(
        {{"request", req}, {"driver", "railyard.io"}, {"pool", pool}, {"device", dev}});
  return {{"metadata", {{"name", "train-rails"}, {"namespace", "ml"}, {"uid", uid}}},
          {"status",
           {{"allocation", {{"devices", {{"results", results}}}}},
            {"reservedFor", {{{"resource", "pods"}, {"name", "train-0"}, {"uid", "pod-uid-1"}}}}}}};
}

std::vector<std::string> strings(const json& j) {
  return j.is_array() ? j.get<std::vector<std::string>>() : std::vector<std::string>{};
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("prepare: a GPU+VF bundle pair and a PF on the DGX H100", "[dra][prepare]") {
  Rig rig;
  const Device& gpu0 = rig.find(DeviceType::kGpu, 0);
  const Device& vf0 = rig.find(DeviceType::kVf, 0);
  const Device& nic3 = rig.find(DeviceType::kNic, 3);
  const auto& vf_fn = rig.node.function(vf0.fn);
  const auto& nic_fn = rig.node.function(nic3.fn);
  REQUIRE(vf_fn.rdma);
  REQUIRE(nic_fn.rdma);
  const json claim =
      claim_json("uid-1", {{"gpu0", gpu0.name}, {"nic0", vf0.name}, {"nic3", nic3.name}});
  const PreparedClaim c = prepare_claim(claim, "uid-1", rig.node, rig.devices,
                                        {.pool = "gpu-node-1", .root = rig.fx.root()});
  CHECK(c.ref() == "ml/train-rails");
  CHECK(c.pods == std::vector<std::string>{"pod-uid-1"});
  REQUIRE(c.devices.size() == 3);
  CHECK(c.devices[0].request == "gpu0");
  CHECK(c.devices[0].type == "gpu");
  CHECK(c.devices[0].rail == 0);
  CHECK(c.devices[1].type == "vf");
  CHECK(c.devices[1].pci == vf0.pci);
  CHECK(c.devices[1].rdma == vf_fn.rdma->name);
  CHECK(c.devices[2].rail == 3);
  CHECK(c.devices[1].cdi_ids == std::vector<std::string>{"railyard.io/claim=uid-1-" + vf0.name});

  const json& spec = c.cdi_spec;
  CHECK(spec["kind"] == "railyard.io/claim");
  REQUIRE(spec["devices"].size() == 3);
  CHECK(spec["devices"][1]["name"] == "uid-1-" + vf0.name);
  // The VF's own uverbs node rides with its CDI device, the claim's env with the spec.
  CHECK(spec["devices"][1]["containerEdits"]["deviceNodes"][0]["path"] ==
        "/dev/infiniband/" + vf_fn.rdma->uverbs);
  const auto env = strings(spec["containerEdits"]["env"]);
  CHECK(has(env, "NCCL_IB_HCA==" + vf_fn.rdma->name + ":1," + nic_fn.rdma->name + ":1"));
  CHECK(has(env, "NVIDIA_VISIBLE_DEVICES=0"));
  CHECK(has(env, "RAILYARD_CLAIM=ml/train-rails"));
  CHECK(has(env, "PCIDEVICE_RAILYARD_IO_RAILS=" + vf0.pci + "," + nic3.pci));
  // --gpu-devices env (the default): the GPU is named, its nodes are left to NVIDIA's runtime.
  CHECK_FALSE(spec["devices"][0]["containerEdits"].contains("deviceNodes"));

  SECTION("--gpu-devices nodes: /dev/nvidiaN and the control nodes") {
    const PreparedClaim n =
        prepare_claim(claim, "uid-1", rig.node, rig.devices,
                      {.pool = "gpu-node-1",
                       .root = rig.fx.root(),
                       .gpu_devices = railyard::deviceplugin::GpuDevices::kNodes});
    CHECK(n.cdi_spec["devices"][0]["containerEdits"]["deviceNodes"][0]["path"] == "/dev/nvidia0");
    CHECK(n.cdi_spec["containerEdits"]["deviceNodes"].dump().find("/dev/nvidiactl") !=
          std::string::npos);
  }
  SECTION("a round trip through the record on disk") {
    const PreparedClaim back = PreparedClaim::from_json(json::parse(c.to_json().dump()));
    CHECK(back.to_json() == c.to_json());
  }
}

TEST_CASE("prepare refuses what is not this node's to prepare", "[dra][prepare]") {
  Rig rig;
  const PrepareOptions opt{.pool = "gpu-node-1", .root = rig.fx.root()};
  const std::string vf0 = rig.find(DeviceType::kVf, 0).name;
  CHECK_THROWS_WITH(
      prepare_claim(claim_json("uid-2", {{"a", vf0}}), "uid-1", rig.node, rig.devices, opt),
      Catch::Contains("has UID uid-2, not the uid-1 asked for"));
  CHECK_THROWS_WITH(prepare_claim(claim_json("uid-1", {{"a", vf0}}, "other-node"), "uid-1",
                                  rig.node, rig.devices, opt),
                    Catch::Contains("allocated from pool other-node"));
  CHECK_THROWS_WITH(prepare_claim(claim_json("uid-1", {{"a", "vf-0000-ee-00-2"}}), "uid-1",
                                  rig.node, rig.devices, opt),
                    Catch::Contains("device vf-0000-ee-00-2 is not on this node"));
  json unallocated = claim_json("uid-1", {{"a", vf0}});
  unallocated["status"].erase("allocation");
  CHECK_THROWS_WITH(prepare_claim(unallocated, "uid-1", rig.node, rig.devices, opt),
                    Catch::Contains("is not allocated"));
}

TEST_CASE("kubelet plugin: prepare, restart, prepare again, unprepare twice", "[dra][prepare]") {
  Rig rig;
  railyard::testing::TempDir tmp;
  PluginOptions opt = railyard::testing::dra_plugin_options(tmp.path(), rig.fx.root());
  // The fixture's netdevs are not on this machine: free unless the test says otherwise.
  std::set<std::string> held;
  opt.netdev_in_host = [&](const std::string& n) { return !held.count(n); };
  const Device& vf0 = rig.find(DeviceType::kVf, 0);
  const Device& nic1 = rig.find(DeviceType::kNic, 1);
  int gets = 0;
  auto getter = [&](const std::string& ns, const std::string& name) {
    ++gets;
    CHECK(ns == "ml");
    CHECK(name == "train-rails");
    return claim_json("uid-1", {{"nic1", nic1.name}, {"nic0", vf0.name}});
  };
  const ClaimRef ref{"ml", "uid-1", "train-rails"};
  const fs::path cdi = opt.cdi_dir / "railyard.io-claim_uid-1.json";
  {
    KubeletPlugin plugin(opt, getter);
    CHECK(plugin.load_state() == 0);
    auto before = plugin.prepare({ref});
    CHECK(before["uid-1"].error == "the node's devices have not been read yet");
    plugin.update_node(std::make_shared<const topo::Node>(rig.node), rig.devices);
    auto r = plugin.prepare({ref});
    REQUIRE(r["uid-1"].error.empty());
    CHECK(r["uid-1"].devices.size() == 2);
    CHECK(fs::exists(cdi));
    CHECK(fs::exists(opt.state_dir / "claims/uid-1.json"));
    // railyard-cni's view: the pod's NICs, rail 0 first whatever the claim's order.
    const auto nics = pod_nics(opt.state_dir, "pod-uid-1");
    REQUIRE(nics.size() == 2);
    CHECK(nics[0].pci == vf0.pci);
    CHECK(nics[0].rail == 0);
    CHECK(nics[1].device == nic1.name);
    CHECK(nics[1].claim == "ml/train-rails");
  }
  // The node rebooted: the records on disk survive, the CDI specs on tmpfs do not. The restarted
  // driver writes every spec again, so the CDI names it answers with still resolve.
  const std::string spec_before = read_text(cdi);
  fs::remove_all(opt.cdi_dir);
  fs::create_directories(opt.cdi_dir);
  // The claim is still known, Prepare answers without the API server.
  KubeletPlugin plugin(opt, getter);
  CHECK(plugin.load_state() == 1);
  REQUIRE(fs::exists(cdi));
  CHECK(read_text(cdi) == spec_before);
  plugin.update_node(std::make_shared<const topo::Node>(rig.node), rig.devices);
  const int gets_before = gets;
  auto again = plugin.prepare({ref});
  CHECK(again["uid-1"].error.empty());
  CHECK(again["uid-1"].devices.size() == 2);
  CHECK(gets == gets_before);

  SECTION("unprepare returns everything, twice over") {
    CHECK(plugin.unprepare({ref})["uid-1"].empty());
    CHECK_FALSE(fs::exists(cdi));
    CHECK_FALSE(fs::exists(opt.state_dir / "claims/uid-1.json"));
    CHECK_FALSE(fs::exists(opt.state_dir / "pods/pod-uid-1"));
    CHECK(pod_nics(opt.state_dir, "pod-uid-1").empty());
    CHECK(plugin.claims().empty());
    CHECK(plugin.unprepare({ref})["uid-1"].empty());
  }
  SECTION("a NIC a pod holds already (not in the host's namespace) is refused, nothing written") {
    CHECK(plugin.unprepare({ref})["uid-1"].empty());
    held.insert(rig.node.function(vf0.fn).netdev_name());
    auto r = plugin.prepare({ref});
    CHECK_THAT(r["uid-1"].error, Catch::Contains("device " + vf0.name + " (" +
                                                 rig.node.function(vf0.fn).netdev_name() +
                                                 ") is not in the host network namespace"));
    CHECK_FALSE(fs::exists(cdi));
    CHECK_FALSE(fs::exists(opt.state_dir / "claims/uid-1.json"));
    CHECK(pod_nics(opt.state_dir, "pod-uid-1").empty());
  }
  SECTION("a second claim for a device still prepared is refused") {
    KubeletPlugin other(opt, [&](const std::string&, const std::string&) {
      return claim_json("uid-9", {{"x", vf0.name}});
    });
    other.load_state();
    other.update_node(std::make_shared<const topo::Node>(rig.node), rig.devices);
    auto r = other.prepare({{"ml", "uid-9", "train-rails"}});
    CHECK_THAT(r["uid-9"].error, Catch::Contains("device " + vf0.name +
                                                 " is still prepared for claim ml/train-rails"));
    CHECK_FALSE(fs::exists(opt.cdi_dir / "railyard.io-claim_uid-9.json"));
  }
  SECTION("networkData: what railyard-cni wrote for this pod, not another's") {
    const auto claims = plugin.claims();
    REQUIRE(claims.size() == 1);
    CHECK(network_entries(claims[0], opt.state_dir, "gpu-node-1").empty());
    write_network_data(opt.state_dir, vf0.pci,
                       {"pod-uid-1", "net1", {"10.100.0.2/16"}, "02:00:00:00:00:01"});
    write_network_data(opt.state_dir, nic1.pci, {"pod-uid-other", "net2", {}, ""});
    const json e = network_entries(claims[0], opt.state_dir, "gpu-node-1");
    REQUIRE(e.size() == 1);
    CHECK(e[0] == json({{"driver", "railyard.io"},
                        {"pool", "gpu-node-1"},
                        {"device", vf0.name},
                        {"networkData",
                         {{"interfaceName", "net1"},
                          {"ips", {"10.100.0.2/16"}},
                          {"hardwareAddress", "02:00:00:00:00:01"}}}}));
    remove_network_data(opt.state_dir, vf0.pci);
    remove_network_data(opt.state_dir, vf0.pci);  // idempotent
    CHECK(network_entries(claims[0], opt.state_dir, "gpu-node-1").empty());
  }
}

TEST_CASE("handoff names only what stays in its directory", "[dra][prepare]") {
  railyard::testing::TempDir tmp;
  CHECK_THROWS_WITH(write_pod_claim(tmp.path(), "../etc", "uid", {}),
                    Catch::Contains("not a valid pod UID"));
  CHECK_THROWS_WITH(write_network_data(tmp.path(), "a/b", {}),
                    Catch::Contains("not a valid PCI address"));
  CHECK(pod_nics(tmp.path(), "no-such-pod").empty());
}

TEST_CASE(
    "kubelet plugin: a claim reference that is no Kubernetes name is refused, nothing written",
    "[dra][prepare]") {
  Rig rig;
  railyard::testing::TempDir tmp;
  PluginOptions opt = railyard::testing::dra_plugin_options(tmp.path(), rig.fx.root());
  opt.netdev_in_host = [](const std::string&) { return true; };
  int gets = 0;
  KubeletPlugin plugin(opt, [&](const std::string&, const std::string&) {
    ++gets;
    return json::object();
  });
  plugin.update_node(std::make_shared<const topo::Node>(rig.node), rig.devices);
  const std::vector<std::pair<ClaimRef, std::string>> bad = {
      {{"ml", "../../etc/x", "c"}, "the claim's uid '../../etc/x' is not a UID"},
      {{"ml", "uid\n1", "c"}, "the claim's uid 'uid\\n1' is not a UID"},
      {{"ML_ns", "uid-1", "c"}, "the claim's namespace 'ML_ns' is not a namespace name"},
      {{"ml", "uid-1", "a/../b"}, "the claim's name 'a/../b' is not an object name"}};
  for (const auto& [ref, why] : bad) {
    CHECK(plugin.prepare({ref})[ref.uid].error == why);
    CHECK(plugin.unprepare({ref})[ref.uid] == (ref.uid == "uid-1" ? "" : why));
  }
  CHECK(gets == 0);
  CHECK_FALSE(fs::exists(opt.cdi_dir));
  CHECK_FALSE(fs::exists(opt.state_dir / "claims"));
}
