// The DRA ResourceSlices of the fixtures: the values a claim selects on, written out from the
// fixtures' layouts (test/fixtures/*.json), and the API's limits on the 512-VF node.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <set>

#include "common/k8s_names.h"
#include "dra/slices/slices.h"
#include "dra/slices/validate.h"
#include "test/support/fixture_node.h"
#include "test/support/run.h"

using namespace railyard::dra;
using nlohmann::json;
using railyard::testing::GeneratedFixture;
namespace topo = railyard::topology;

namespace {

// The DGX's compute fabric only: the Ethernet storage NICs are no rails, rail k is GPU k's NIC.
constexpr const char* kIbRails = R"({"selectors": {"linkTypes": ["infiniband"]}})";

topo::Node discover_fixture(const GeneratedFixture& fx, const std::string& rails = "{}") {
  topo::Node node =
      topo::discover(fx.sysfs(), topo::parse_rails_config(rails, "test"), {.vf_ports = true});
  for (const auto& d : node.diagnostics.all()) UNSCOPED_INFO(d.to_string());
  REQUIRE(node.diagnostics.all().empty());
  return node;
}

std::vector<json> slices_of(const GeneratedFixture& fx, const std::string& rails = "{}",
                            SliceOptions opt = {.node_name = "gpu-node-1"}) {
  const topo::Node node = discover_fixture(fx, rails);
  return node_slices(node, check_health(fx.sysfs(), node), opt);
}

std::vector<json> all_devices(const std::vector<json>& slices) {
  std::vector<json> out;
  for (const auto& s : slices)
    for (const auto& d : s["spec"]["devices"]) out.push_back(d);
  return out;
}

const json& device(const std::vector<json>& devices, const std::string& name) {
  for (const auto& d : devices)
    if (d["name"] == name) return d;
  FAIL("no device " << name);
  throw;
}

json attr(const json& dev, const std::string& name) {
  INFO(dev["name"] << " " << name);
  REQUIRE(dev["attributes"].contains(name));
  return dev["attributes"][name].begin().value();
}

void check_valid(const std::vector<json>& slices) {
  std::set<std::string> names, slice_names;
  for (const auto& s : slices) {
    for (const auto& problem : validate_slice(s)) FAIL_CHECK(problem);
    CHECK(slice_names.insert(s["metadata"]["name"].get<std::string>()).second);
    CHECK(s["spec"]["pool"]["resourceSliceCount"] == slices.size());
    CHECK(s["spec"]["pool"]["generation"] == slices.front()["spec"]["pool"]["generation"]);
    for (const auto& d : s["spec"]["devices"]) {
      CHECK(names.insert(d["name"].get<std::string>()).second);  // unique in the whole pool
      CHECK(d["attributes"].size() + d.value("capacity", json::object()).size() <=
            kMaxAttributesPerDevice);
    }
  }
}

}  // namespace

TEST_CASE("DGX H100: one slice, the values of GPU0 and its NIC", "[dra][fixture]") {
  GeneratedFixture fx("dgx-h100");
  const auto slices = slices_of(fx, kIbRails);
  REQUIRE(slices.size() == 1);
  check_valid(slices);
  const auto& s = slices[0];
  CHECK(s["apiVersion"] == "resource.k8s.io/v1");
  CHECK(s["kind"] == "ResourceSlice");
  CHECK(s["metadata"]["name"] == "gpu-node-1-railyard.io-0");
  CHECK(s["spec"]["driver"] == "railyard.io");
  CHECK(s["spec"]["nodeName"] == "gpu-node-1");
  CHECK(s["spec"]["pool"] ==
        json({{"name", "gpu-node-1"}, {"generation", 1}, {"resourceSliceCount", 1}}));
  const auto devs = all_devices(slices);
  // 8 GPUs, 8 rail PFs, the 4 VFs of mlx5_0 and of mlx5_6; no storage NIC.
  REQUIRE(devs.size() == 24);

  const auto& gpu0 = device(devs, "gpu-0000-18-00-0");
  CHECK(attr(gpu0, "railyard.io/type") == "gpu");
  CHECK(attr(gpu0, "railyard.io/index") == 0);
  CHECK(attr(gpu0, "resource.kubernetes.io/pcieRoot") == "pci0000:15");
  CHECK(attr(gpu0, "resource.kubernetes.io/pciBusID") == "0000:18:00.0");
  CHECK(attr(gpu0, "resource.kubernetes.io/numaNode") == 0);
  CHECK(attr(gpu0, "railyard.io/pcieSwitch") == "0000:16:00.0");
  CHECK(attr(gpu0, "railyard.io/rail") == 0);
  CHECK(attr(gpu0, "railyard.io/pathClass") == "PIX");
  CHECK(attr(gpu0, "railyard.io/bundleRdmaDevice") == "mlx5_0");
  CHECK(attr(gpu0, "railyard.io/healthy") == true);
  CHECK_FALSE(gpu0.contains("capacity"));

  const auto& nic0 = device(devs, "nic-0000-19-00-0");
  CHECK(attr(nic0, "railyard.io/type") == "nic");
  CHECK(attr(nic0, "railyard.io/rail") == 0);
  CHECK(attr(nic0, "railyard.io/rdmaDevice") == "mlx5_0");
  CHECK(attr(nic0, "railyard.io/ifName") == "ibp25s0");
  CHECK(attr(nic0, "railyard.io/linkLayer") == "infiniband");
  CHECK(attr(nic0, "resource.kubernetes.io/pcieRoot") == "pci0000:15");
  CHECK(attr(nic0, "resource.kubernetes.io/pciBusID") == "0000:19:00.0");
  // GPU and NIC under one switch: what matchAttribute railyard.io/pcieSwitch pairs.
  CHECK(attr(nic0, "railyard.io/pcieSwitch") == attr(gpu0, "railyard.io/pcieSwitch"));
  CHECK(nic0["capacity"]["railyard.io/linkSpeed"]["value"] == "400G");

  const auto& vf = device(devs, "vf-0000-19-00-5");
  CHECK(attr(vf, "railyard.io/type") == "vf");
  CHECK(attr(vf, "railyard.io/vf") == 3);
  CHECK(attr(vf, "railyard.io/rail") == 0);
  CHECK(attr(vf, "railyard.io/rdmaDevice") == "mlx5_15");
  CHECK(attr(vf, "railyard.io/ifName") == "ibp25s0v3");
  CHECK(attr(vf, "railyard.io/pcieSwitch") == "0000:16:00.0");
  CHECK(vf["capacity"]["railyard.io/linkSpeed"]["value"] == "400G");

  // GPU1 pairs with mlx5_3 (RDMA names are not in GPU order), on the second socket GPU4 with
  // mlx5_6.
  const auto& gpu1 = device(devs, "gpu-0000-3a-00-0");
  CHECK(attr(gpu1, "railyard.io/bundleRdmaDevice") == "mlx5_3");
  CHECK(attr(gpu1, "railyard.io/rail") == 1);
  CHECK(attr(device(devs, "nic-0000-3b-00-0"), "railyard.io/rdmaDevice") == "mlx5_3");
  const auto& gpu4 = device(devs, "gpu-0000-9a-00-0");
  CHECK(attr(gpu4, "resource.kubernetes.io/numaNode") == 1);
  CHECK(attr(gpu4, "resource.kubernetes.io/pcieRoot") == "pci0000:97");
  CHECK(attr(gpu4, "railyard.io/rail") == 4);
}

TEST_CASE("DGX H100 with the default rails: storage NICs become rails, no path changes",
          "[dra][fixture]") {
  GeneratedFixture fx("dgx-h100");
  const auto slices = slices_of(fx);
  check_valid(slices);
  const auto devs = all_devices(slices);
  REQUIRE(devs.size() == 28);  // 8 GPUs, 12 PFs, 8 VFs
  const auto& storage = device(devs, "nic-0000-3c-00-0");
  CHECK(attr(storage, "railyard.io/linkLayer") == "ethernet");
  CHECK(attr(storage, "railyard.io/rdmaDevice") == "mlx5_1");
  CHECK(storage["capacity"]["railyard.io/linkSpeed"]["value"] == "200G");
  // On its own root port: no switch to publish, so no switch-local claim can take it.
  CHECK_FALSE(storage["attributes"].contains("railyard.io/pcieSwitch"));
  CHECK(attr(device(devs, "gpu-0000-3a-00-0"), "railyard.io/pathClass") == "PIX");
}

TEST_CASE("DGX A100: GPU and NIC under one top switch, PXB", "[dra][fixture]") {
  GeneratedFixture fx("dgx-a100");
  const auto slices = slices_of(fx);
  REQUIRE(slices.size() == 1);
  check_valid(slices);
  const auto devs = all_devices(slices);
  REQUIRE(devs.size() == 16);
  const auto& gpu0 = device(devs, "gpu-0000-0c-00-0");
  const auto& nic0 = device(devs, "nic-0000-10-00-0");
  CHECK(attr(gpu0, "railyard.io/pathClass") == "PXB");
  CHECK(attr(gpu0, "railyard.io/rail") == 0);
  CHECK(attr(nic0, "railyard.io/rail") == 0);
  CHECK(attr(gpu0, "resource.kubernetes.io/pcieRoot") == "pci0000:07");
  CHECK(attr(nic0, "resource.kubernetes.io/pcieRoot") == "pci0000:07");
  // The GPUs and the NICs each sit under their own second-level switch, both under one top.
  CHECK(attr(gpu0, "railyard.io/pcieSwitch") == "0000:0a:00.0");
  CHECK(attr(nic0, "railyard.io/pcieSwitch") == "0000:0e:00.0");
  CHECK(attr(gpu0, "railyard.io/pcieTopSwitch") == "0000:08:00.0");
  CHECK(attr(nic0, "railyard.io/pcieTopSwitch") == "0000:08:00.0");
  CHECK(nic0["capacity"]["railyard.io/linkSpeed"]["value"] == "200G");
}

TEST_CASE("512 VFs: the pool split into slices within the API's limits", "[dra][fixture]") {
  GeneratedFixture fx("scale-8x8x64");
  const auto slices = slices_of(fx);
  // 8 GPUs + 8 PFs + 512 VFs = 528 devices, 64 a slice (devices may carry taints), 128 without.
  REQUIRE(slices.size() == 9);
  CHECK(slices_of(fx, "{}", {.node_name = "gpu-node-1", .unhealthy = Unhealthy::kDrop}).size() ==
        5);
  check_valid(slices);
  size_t total = 0;
  for (size_t i = 0; i < slices.size(); ++i) {
    const auto n = slices[i]["spec"]["devices"].size();
    CHECK(n <= kMaxTaintedDevicesPerSlice);
    CHECK(slices[i]["metadata"]["name"] == "gpu-node-1-railyard.io-" + std::to_string(i));
    total += n;
  }
  CHECK(total == 528);
  size_t vfs = 0, gpus = 0;
  for (const auto& d : all_devices(slices)) {
    vfs += attr(d, "railyard.io/type") == "vf";
    gpus += attr(d, "railyard.io/type") == "gpu";
  }
  CHECK(vfs == 512);
  CHECK(gpus == 8);
}

TEST_CASE("every other fixture's slices pass the API server's checks", "[dra][fixture]") {
  for (const char* name : {"cloud-vm", "degraded", "lab-rxe", "sim-node-8rails", "switchless-2s"}) {
    INFO(name);
    GeneratedFixture fx(name);
    const topo::Node node = topo::discover(fx.sysfs(), topo::parse_rails_config("{}", "test"));
    const auto slices = node_slices(node, check_health(fx.sysfs(), node),
                                    {.node_name = "node-a", .unhealthy = Unhealthy::kMark});
    check_valid(slices);
    CHECK(all_devices(slices).size() == node.gpus.size() + node.rails.size() + [&] {
      size_t vfs = 0;
      for (int n : node.rails) vfs += node.nics[static_cast<size_t>(n)].vfs.size();
      return vfs;
    }());
  }
}

TEST_CASE("a smaller slice size and the generation are the caller's", "[dra]") {
  GeneratedFixture fx("dgx-h100");
  const auto slices =
      slices_of(fx, kIbRails, {.node_name = "n", .generation = 7, .max_devices = 10});
  REQUIRE(slices.size() == 3);
  check_valid(slices);
  CHECK(slices[2]["spec"]["devices"].size() == 4);
  CHECK(slices[1]["spec"]["pool"]["generation"] == 7);
}

TEST_CASE("unhealthy devices are tainted, or marked or dropped when asked", "[dra][health]") {
  SECTION("degraded: GPU1's RoCE NIC is DOWN") {
    GeneratedFixture fx("degraded");
    auto names = [](const std::vector<json>& slices) {
      std::vector<std::string> out;
      for (const auto& d : all_devices(slices)) out.push_back(d["name"]);
      return out;
    };
    // By default it stays, with a NoSchedule taint that says why; the healthy carry none.
    const auto tainted = slices_of(fx, "{}", {.node_name = "n"});
    check_valid(tainted);
    const auto devs = all_devices(tainted);
    REQUIRE(devs.size() == 4);
    const json& down = device(devs, "nic-0000-9b-00-0");
    REQUIRE(down.contains("taints"));
    REQUIRE(down["taints"].size() == 1);
    CHECK(down["taints"][0]["key"] == "railyard.io/rail-down");
    CHECK(down["taints"][0]["effect"] == "NoSchedule");
    CHECK(attr(down, "railyard.io/healthy") == false);
    CHECK_FALSE(device(devs, "nic-0000-19-00-0").contains("taints"));
    CHECK_FALSE(device(devs, "gpu-0000-18-00-0").contains("taints"));
    const auto evicting =
        all_devices(slices_of(fx, "{}", {.node_name = "n", .effect = TaintEffect::kNoExecute}));
    CHECK(device(evicting, "nic-0000-9b-00-0")["taints"][0]["effect"] == "NoExecute");
    CHECK(names(slices_of(fx, "{}", {.node_name = "n", .unhealthy = Unhealthy::kDrop})) ==
          std::vector<std::string>{"gpu-0000-18-00-0", "gpu-0000-9a-00-0", "nic-0000-19-00-0"});
    const auto marked =
        all_devices(slices_of(fx, "{}", {.node_name = "n", .unhealthy = Unhealthy::kMark}));
    REQUIRE(marked.size() == 4);
    CHECK_FALSE(device(marked, "nic-0000-9b-00-0").contains("taints"));
    CHECK(attr(device(marked, "nic-0000-9b-00-0"), "railyard.io/healthy") == false);
    CHECK(attr(device(marked, "nic-0000-19-00-0"), "railyard.io/healthy") == true);
  }
  SECTION("a rail's port going down taints its VFs with it; a GPU that is gone, itself") {
    GeneratedFixture fx("dgx-h100");
    const topo::Node node = discover_fixture(fx, kIbRails);
    std::ofstream(fx.sys("bus/pci/devices/0000:19:00.0/infiniband/mlx5_0/ports/1/state"))
        << "1: DOWN\n";
    std::filesystem::remove_all(fx.sys("bus/pci/devices/0000:da:00.0"));
    const auto health = check_health(fx.sysfs(), node);
    CHECK_FALSE(health.at("0000:19:00.0").healthy);
    CHECK_FALSE(health.at("0000:19:00.3").healthy);
    CHECK_FALSE(health.at("0000:da:00.0").healthy);
    CHECK(health.at("0000:db:00.0").healthy);  // GPU7's NIC stays
    CHECK(all_devices(node_slices(node, health, {.node_name = "n", .unhealthy = Unhealthy::kDrop}))
              .size() == 24 - 5 - 1);
    auto devices = build_devices(node, health);
    for (auto& d : devices)
      if (!d.healthy) d.unhealthy_since = "2026-12-07T13:00:00Z";
    const auto devs = all_devices(build_slices(devices, {.node_name = "n"}));
    REQUIRE(devs.size() == 24);
    std::map<std::string, int> keys;
    for (const auto& d : devs)
      for (const auto& t : d.value("taints", json::array())) {
        ++keys[t["key"].get<std::string>() + "=" + t["value"].get<std::string>()];
        CHECK(t["timeAdded"] == "2026-12-07T13:00:00Z");
      }
    CHECK(keys == std::map<std::string, int>{{"railyard.io/rail-down=port-down", 5},
                                             {"railyard.io/rail-down=gone", 1}});
  }
}

TEST_CASE("a tainting pool keeps to 64 devices a slice, healthy or not", "[dra][health]") {
  std::vector<Device> devices(70);
  for (size_t i = 0; i < devices.size(); ++i) devices[i].name = "vf-" + std::to_string(i);
  const auto tainting = build_slices(devices, {.node_name = "n"});
  REQUIRE(tainting.size() == 2);
  CHECK(tainting[0]["spec"]["devices"].size() == 64);
  CHECK(build_slices(devices, {.node_name = "n", .unhealthy = Unhealthy::kDrop}).size() == 1);
  // The validator holds a slice with taints to the same limit.
  json big = build_slices(devices, {.node_name = "n", .unhealthy = Unhealthy::kDrop})[0];
  big["spec"]["devices"][0]["taints"] = {
      {{"key", "railyard.io/rail-down"}, {"value", "port-down"}, {"effect", "NoSchedule"}}};
  const auto problems = validate_slice(big);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "70 devices, more than 64 (a slice with taints)");
  big["spec"]["devices"][1]["taints"] = {
      {{"key", "railyard.io/bad key"}, {"value", "x y"}, {"effect", "PreferNoSchedule"}}};
  CHECK(validate_slice(big).size() == 4);
}

TEST_CASE("names the API server checks", "[dra][validate]") {
  CHECK(railyard::is_dns1123_label("gpu-0000-18-00-0"));
  CHECK_FALSE(railyard::is_dns1123_label("GPU-0"));
  CHECK_FALSE(railyard::is_dns1123_label("-a"));
  CHECK_FALSE(railyard::is_dns1123_label(std::string(64, 'a')));
  CHECK(railyard::is_label_key("railyard.io/rail-down"));
  CHECK(railyard::is_label_key("Rail_5.down"));
  CHECK_FALSE(railyard::is_label_key("railyard.io/"));
  CHECK_FALSE(railyard::is_label_key("railyard.io/-down"));
  CHECK_FALSE(railyard::is_label_key("Railyard.io/down"));
  CHECK(railyard::is_label_value(""));
  CHECK(railyard::is_label_value("port-down"));
  CHECK_FALSE(railyard::is_label_value("port down"));
  CHECK_FALSE(railyard::is_label_value(std::string(64, 'a')));
  CHECK(railyard::is_dns1123_subdomain("railyard.io"));
  CHECK_FALSE(railyard::is_dns1123_subdomain("railyard..io"));
  CHECK(is_qualified_name("railyard.io/pcieTopSwitch"));
  CHECK(is_qualified_name("resource.kubernetes.io/pciBusID"));
  CHECK(is_qualified_name("healthy"));
  CHECK_FALSE(is_qualified_name("railyard.io/"));
  CHECK_FALSE(is_qualified_name("railyard.io/link-speed"));
  CHECK_FALSE(is_qualified_name("railyard.io/" + std::string(33, 'a')));
  json bad = {{"apiVersion", "resource.k8s.io/v1"},
              {"kind", "ResourceSlice"},
              {"spec",
               {{"driver", "railyard.io"},
                {"pool", {{"name", "n"}, {"generation", 1}, {"resourceSliceCount", 1}}},
                {"devices",
                 {{{"name", "a"}, {"attributes", {{"x", {{"int", 1}, {"bool", true}}}}}},
                  {{"name", "a"}, {"capacity", {{"y", {{"value", "fast"}}}}}}}}}}};
  CHECK(validate_slice(bad).size() == 3);  // two typed values, a name twice, a bad quantity
}

TEST_CASE("railyard-dra-driver slices prints a List kubectl takes", "[dra][cli]") {
  GeneratedFixture fx("dgx-h100");
  auto r =
      railyard::testing::run({RAILYARD_BIN_DIR "/railyard-dra-driver", "slices", "--sysfs-root",
                              fx.root().string(), "--node", "gpu-node-1", "--generation", "3"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto list = json::parse(r.out);
  CHECK(list["kind"] == "List");
  REQUIRE(list["items"].size() == 1);
  CHECK(list["items"][0]["spec"]["pool"]["generation"] == 3);
  CHECK(list["items"][0]["spec"]["devices"].size() == 28);
}
