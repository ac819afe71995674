// The device plugin's config file and names: what is accepted, and the message for what is not.
#include <catch2/catch.hpp>

#include "deviceplugin/config.h"

using namespace railyard::deviceplugin;

TEST_CASE("extended resource names follow Kubernetes' rule", "[deviceplugin]") {
  CHECK(valid_resource_name("railyard.io/rail0"));
  CHECK(valid_resource_name("example.com/gpu-nic_bundle.v2"));
  CHECK_FALSE(valid_resource_name("rail0"));
  CHECK_FALSE(valid_resource_name("railyard.io/"));
  CHECK_FALSE(valid_resource_name("railyard.io/a/b"));
  CHECK_FALSE(valid_resource_name("Railyard.io/rail0"));
  CHECK_FALSE(valid_resource_name("railyard.io/-rail"));
  CHECK_FALSE(valid_resource_name("kubernetes.io/rail0"));
  CHECK_FALSE(valid_resource_name("node.kubernetes.io/rail0"));
  CHECK_FALSE(valid_resource_name("railyard.io/" + std::string(64, 'a')));
}

TEST_CASE("PCIDEVICE env names are sriov-network-device-plugin's", "[deviceplugin]") {
  CHECK(pcidevice_env_name("railyard.io/rail0") == "PCIDEVICE_RAILYARD_IO_RAIL0");
  CHECK(pcidevice_env_name("example.com/gpu-nic.b") == "PCIDEVICE_EXAMPLE_COM_GPU_NIC_B");
}

TEST_CASE("the default config: a bundle pool and per-rail VF pools", "[deviceplugin]") {
  const Config c = Config::defaults();
  REQUIRE(c.pools.size() == 2);
  CHECK(c.pools[0].name == "railyard.io/bundle");
  CHECK(c.pools[0].kind == PoolKind::kBundle);
  CHECK(c.pools[1].name == "railyard.io/rail");
  CHECK(c.pools[1].per_rail);
  // A prefix alone changes the default pools' names.
  const Config p = Config::parse(R"({"resourcePrefix": "example.com"})", "f.json");
  CHECK(p.pools[0].name == "example.com/bundle");
}

TEST_CASE("sriov-network-device-plugin's config shape is read", "[deviceplugin]") {
  const Config c = Config::parse(R"({"resourceList": [
    {"resourcePrefix": "nvidia.com", "resourceName": "hostdev", "kind": "vf", "deviceType": "netDevice",
     "selectors": [{"vendors": ["15b3"], "devices": ["101e"], "isRdma": true, "pfNames": ["ibp25s0"]}]}]})",
                                 "f.json");
  REQUIRE(c.pools.size() == 1);
  CHECK(c.pools[0].name == "nvidia.com/hostdev");
  CHECK(c.pools[0].selectors.vendors == std::vector<std::string>{"15b3"});
  CHECK(c.pools[0].selectors.pf_names == std::vector<std::string>{"ibp25s0"});
}

TEST_CASE("bad config fields are named", "[deviceplugin]") {
  auto error_of = [](const std::string& text) {
    try {
      Config::parse(text, "f.json");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(error_of("[1]") == "f.json: must be a JSON object");
  CHECK(error_of(R"({"colour": 1})") == "f.json: unknown field 'colour'");
  CHECK(error_of(R"({"resourceList": []})") == "f.json: resourceList is empty");
  CHECK(error_of(R"({"resourceList": [{"kind": "vf"}]})") ==
        "f.json: resourceList[0]: resourceName is required");
  CHECK(error_of(R"({"resourceList": [{"resourceName": "a", "kind": "gpu"}]})") ==
        "f.json: resourceList[0]: kind must be \"bundle\", \"vf\" or \"pf\", not \"gpu\"");
  CHECK(
      error_of(R"({"resourceList": [{"resourceName": "a", "selectors": {"vendors": "15b3"}}]})") ==
      "f.json: resourceList[0]: selector 'vendors' must be a list of strings");
  CHECK(
      error_of(R"({"resourceList": [{"resourceName": "a", "kind": "vf", "nicFunction": "vf"}]})") ==
      "f.json: resourceList[0]: nicFunction and vfIndex apply to kind \"bundle\" only");
  CHECK(error_of(R"({"resourceList": [{"resourceName": "a"}, {"resourceName": "a"}]})") ==
        "f.json: resource 'railyard.io/a' is listed twice");
  CHECK(error_of(R"({"gpuDevices": "all"})") ==
        "f.json: gpuDevices must be \"nodes\", \"cdi\" or \"env\"");
  CHECK(error_of(R"({"healthPollMs": 1})") == "f.json: healthPollMs must be between 10 and 60000");
}
