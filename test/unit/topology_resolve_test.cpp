// resolve_function() answers for one function what the full model answers, on every fixture and
// for every function in it (PFs, VFs, other PCI devices), under the default rails and under
// selectors and an explicit order.
#include <catch2/catch.hpp>
#include <filesystem>

#include "test/support/fixture_node.h"
#include "topology/discover/discover.h"
#include "topology/discover/resolve.h"

using namespace railyard::topology;
using railyard::testing::GeneratedFixture;

namespace {

void same_as_full_model(const std::string& fixture, const std::string& rails_json) {
  GeneratedFixture fx(fixture);
  const Sysfs sysfs = fx.sysfs();
  const RailsConfig rails = parse_rails_config(rails_json, "test");
  const Node node = discover(sysfs, rails);
  int checked = 0;
  for (const auto& nic : node.nics) {
    std::vector<const NicFunction*> fns{&nic.pf};
    for (const auto& vf : nic.vfs) fns.push_back(&vf);
    for (const NicFunction* fn : fns) {
      INFO(fixture << " " << rails_json << " " << fn->pci.address.to_string());
      const auto r = resolve_function(sysfs, rails, fn->pci.address);
      REQUIRE(r);
      CHECK(r->rdma_nic);
      CHECK(r->netdev == fn->netdev_name());
      CHECK(r->rdma == fn->rdma_name());
      CHECK(r->vf_number == fn->vf_number);
      CHECK(r->rail == nic.rail);
      CHECK(r->rail == node.rail_of(fn->pci.address));
      CHECK(r->pf_rdma == nic.pf.rdma_name());
      CHECK(r->pf_netdev == nic.pf.netdev_name());
      if (!fn->netdev_name().empty()) {
        const auto by_name = resolve_netdev(sysfs, rails, fn->netdev_name());
        REQUIRE(by_name);
        CHECK(by_name->address == fn->pci.address);
        CHECK(by_name->rail == nic.rail);
        CHECK(by_name->vf_number == fn->vf_number);
      }
      ++checked;
    }
  }
  CHECK(checked > 0);
  // Every other PCI function: found, and not an RDMA NIC function.
  for (const auto& entry : std::filesystem::directory_iterator(fx.sys("bus/pci/devices"))) {
    const auto addr = PciAddress::parse(entry.path().filename().string());
    REQUIRE(addr);
    if (node.find_function(*addr)) continue;
    const auto r = resolve_function(sysfs, rails, *addr);
    REQUIRE(r);
    CHECK_FALSE(r->rdma_nic);
    CHECK(r->rail == -1);
  }
  CHECK_FALSE(resolve_function(sysfs, rails, *PciAddress::parse("0000:ff:1f.7")));
  CHECK_FALSE(resolve_netdev(sysfs, rails, "no-such-netdev"));
}

}  // namespace

TEST_CASE("resolve_function: the full model's answer for every function of every fixture",
          "[topology][resolve]") {
  for (const char* f : {"dgx-h100", "dgx-a100", "sim-node-8rails", "switchless-2s", "cloud-vm",
                        "scale-8x8x64", "degraded", "lab-rxe"})
    same_as_full_model(f, "{}");
}

TEST_CASE("resolve_function: rails chosen by selectors and by an explicit order",
          "[topology][resolve]") {
  same_as_full_model("dgx-h100", R"({"selectors": {"linkTypes": ["infiniband"]}})");
  same_as_full_model("dgx-h100", R"({"selectors": {"linkTypes": ["ethernet"]}})");
  same_as_full_model("sim-node-8rails",
                     R"({"rails": ["mlx5_7", "mlx5_6", "mlx5_5", "mlx5_4", "mlx5_3", "mlx5_2",
                                   "mlx5_1", "mlx5_0"]})");
}
