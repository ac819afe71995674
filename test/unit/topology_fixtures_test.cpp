// Every fixture: the full path matrix, the rails and the bundles, written out by hand from the
// fixture's layout (test/fixtures/*.json).
#include <catch2/catch.hpp>

#include "test/support/fixture_node.h"

using namespace railyard::topology;
using railyard::testing::bundle_summary;
using railyard::testing::GeneratedFixture;
using railyard::testing::matrix_rows;
using railyard::testing::rail_names;

namespace {

Node discover_fixture(const GeneratedFixture& fx, const std::string& rails_json = "{}") {
  Node node = discover(fx.sysfs(), parse_rails_config(rails_json, "test"));
  for (const auto& d : node.diagnostics.all()) UNSCOPED_INFO(d.to_string());
  REQUIRE(node.diagnostics.all().empty());
  return node;
}

void check_matrix(const Node& node, const std::vector<std::string>& expected) {
  const auto rows = matrix_rows(node);
  REQUIRE(rows.size() == expected.size());
  for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i] == expected[i]);
}

}  // namespace

TEST_CASE("DGX H100-like: GPUs, NICs, VFs and the matrix", "[topology][fixture]") {
  GeneratedFixture fx("dgx-h100");
  Node node = discover_fixture(fx);
  REQUIRE(node.gpus.size() == 8);
  REQUIRE(node.nics.size() == 12);
  CHECK(node.gpus[0].pci.address.to_string() == "0000:18:00.0");
  CHECK(node.gpus[7].pci.address.to_string() == "0000:da:00.0");
  CHECK(node.gpus[4].pci.numa_node == 1);
  CHECK(node.gpus[0].pci.host_bridge == "pci0000:15");
  REQUIRE(node.gpus[0].pci.bridges.size() == 3);  // root port, switch upstream, downstream
  CHECK(node.gpus[0].pci.bridges[0].to_string() == "0000:15:01.0");

  const Nic& nic0 = node.nics[0];
  CHECK(nic0.pf.pci.address.to_string() == "0000:19:00.0");
  CHECK(nic0.pf.rdma_name() == "mlx5_0");
  CHECK(nic0.pf.netdev_name() == "ibp25s0");
  CHECK(nic0.pf.pci.driver == "mlx5_core");
  CHECK(nic0.pf.rdma->uverbs == "uverbs0");
  REQUIRE(nic0.port());
  CHECK(nic0.port()->state == "ACTIVE");
  CHECK(nic0.port()->active());
  CHECK(nic0.port()->phys_state == "LinkUp");
  CHECK(nic0.port()->rate_gbps == 400.0);
  CHECK(nic0.link_layer() == "InfiniBand");
  REQUIRE(nic0.port()->gids.size() == 1);  // the zero entries are skipped
  CHECK(nic0.port()->gids[0].type == "IB/RoCE v1");
  CHECK(nic0.total_vfs == 16);
  CHECK(nic0.num_vfs == 4);
  REQUIRE(nic0.vfs.size() == 4);
  CHECK(nic0.vfs[0].pci.address.to_string() == "0000:19:00.2");
  CHECK(nic0.vfs[3].pci.address.to_string() == "0000:19:00.5");
  CHECK(nic0.vfs[3].vf_number == 3);
  CHECK(nic0.pf.vf_number == -1);
  CHECK(nic0.vfs[0].netdev_name() == "ibp25s0v0");
  CHECK(nic0.vfs[0].rdma_name() == "mlx5_12");
  CHECK(nic0.vfs[0].pci.device == 0x101e);
  CHECK(node.nics[6].vfs[0].rdma_name() == "mlx5_16");

  const Nic& storage = node.nics[2];  // dual-port Ethernet card, function 0
  CHECK(storage.pf.rdma_name() == "mlx5_1");
  CHECK(storage.link_layer() == "Ethernet");
  REQUIRE(storage.port()->gids.size() == 2);
  CHECK(storage.port()->gids[1].type == "RoCE v2");
  CHECK(storage.port()->gids[1].netdev == "enp60s0f0np0");
  CHECK(node.nics[3].pf.pci.address.to_string() == "0000:3c:00.1");

  check_matrix(node, {
                         "GPU0 X NODE NODE NODE SYS SYS SYS SYS PIX NODE NODE NODE NODE NODE SYS "
                         "SYS SYS SYS SYS SYS",
                         "GPU1 NODE X NODE NODE SYS SYS SYS SYS NODE PIX PHB PHB NODE NODE SYS SYS "
                         "SYS SYS SYS SYS",
                         "GPU2 NODE NODE X NODE SYS SYS SYS SYS NODE NODE NODE NODE PIX NODE SYS "
                         "SYS SYS SYS SYS SYS",
                         "GPU3 NODE NODE NODE X SYS SYS SYS SYS NODE NODE NODE NODE NODE PIX SYS "
                         "SYS SYS SYS SYS SYS",
                         "GPU4 SYS SYS SYS SYS X NODE NODE NODE SYS SYS SYS SYS SYS SYS PIX NODE "
                         "NODE NODE NODE NODE",
                         "GPU5 SYS SYS SYS SYS NODE X NODE NODE SYS SYS SYS SYS SYS SYS NODE PIX "
                         "PHB PHB NODE NODE",
                         "GPU6 SYS SYS SYS SYS NODE NODE X NODE SYS SYS SYS SYS SYS SYS NODE NODE "
                         "NODE NODE PIX NODE",
                         "GPU7 SYS SYS SYS SYS NODE NODE NODE X SYS SYS SYS SYS SYS SYS NODE NODE "
                         "NODE NODE NODE PIX",
                         "NIC0 PIX NODE NODE NODE SYS SYS SYS SYS X NODE NODE NODE NODE NODE SYS "
                         "SYS SYS SYS SYS SYS",
                         "NIC1 NODE PIX NODE NODE SYS SYS SYS SYS NODE X PHB PHB NODE NODE SYS SYS "
                         "SYS SYS SYS SYS",
                         "NIC2 NODE PHB NODE NODE SYS SYS SYS SYS NODE PHB X PIX NODE NODE SYS SYS "
                         "SYS SYS SYS SYS",
                         "NIC3 NODE PHB NODE NODE SYS SYS SYS SYS NODE PHB PIX X NODE NODE SYS SYS "
                         "SYS SYS SYS SYS",
                         "NIC4 NODE NODE PIX NODE SYS SYS SYS SYS NODE NODE NODE NODE X NODE SYS "
                         "SYS SYS SYS SYS SYS",
                         "NIC5 NODE NODE NODE PIX SYS SYS SYS SYS NODE NODE NODE NODE NODE X SYS "
                         "SYS SYS SYS SYS SYS",
                         "NIC6 SYS SYS SYS SYS PIX NODE NODE NODE SYS SYS SYS SYS SYS SYS X NODE "
                         "NODE NODE NODE NODE",
                         "NIC7 SYS SYS SYS SYS NODE PIX NODE NODE SYS SYS SYS SYS SYS SYS NODE X "
                         "PHB PHB NODE NODE",
                         "NIC8 SYS SYS SYS SYS NODE PHB NODE NODE SYS SYS SYS SYS SYS SYS NODE PHB "
                         "X PIX NODE NODE",
                         "NIC9 SYS SYS SYS SYS NODE PHB NODE NODE SYS SYS SYS SYS SYS SYS NODE PHB "
                         "PIX X NODE NODE",
                         "NIC10 SYS SYS SYS SYS NODE NODE PIX NODE SYS SYS SYS SYS SYS SYS NODE "
                         "NODE NODE NODE X NODE",
                         "NIC11 SYS SYS SYS SYS NODE NODE NODE PIX SYS SYS SYS SYS SYS SYS NODE "
                         "NODE NODE NODE NODE X",
                     });
}

TEST_CASE("DGX H100-like: rails and bundles, with and without storage NICs",
          "[topology][fixture]") {
  GeneratedFixture fx("dgx-h100");
  SECTION("default: every RDMA PF is a rail, by PCI address; storage NICs get no GPU") {
    Node node = discover_fixture(fx);
    CHECK(rail_names(node) ==
          "mlx5_0 mlx5_3 mlx5_1 mlx5_2 mlx5_4 mlx5_5 mlx5_6 mlx5_9 mlx5_7 mlx5_8 mlx5_10 mlx5_11");
    CHECK(bundle_summary(node) ==
          "0:mlx5_0:PIX 1:mlx5_3:PIX 2:mlx5_4:PIX 3:mlx5_5:PIX 4:mlx5_6:PIX 5:mlx5_9:PIX "
          "6:mlx5_10:PIX 7:mlx5_11:PIX");
    CHECK(node.bundles[1].rail == 1);
    CHECK(node.bundles[2].rail == 4);
  }
  SECTION("selectors leave the Ethernet storage NICs out: rail k is GPU k's NIC") {
    Node node = discover_fixture(fx, R"({"selectors": {"linkTypes": ["infiniband"]}})");
    CHECK(rail_names(node) == "mlx5_0 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_9 mlx5_10 mlx5_11");
    for (const auto& b : node.bundles) CHECK(b.rail == b.gpu);
    CHECK(node.nics[2].rail == -1);
    CHECK(node.rail_of(*PciAddress::parse("0000:19:00.3")) == 0);  // a VF is on its PF's rail
    CHECK(node.rail_of(*PciAddress::parse("0000:3c:00.0")) == -1);
  }
  SECTION("an explicit order by RDMA name, netdev and PCI address") {
    Node node = discover_fixture(
        fx, R"({"rails": ["mlx5_11", "ibp203s0", "0000:bb:00.0", "mlx5_6", "mlx5_5", "mlx5_4",
                          "mlx5_3", "mlx5_0"]})");
    CHECK(rail_names(node) == "mlx5_11 mlx5_10 mlx5_9 mlx5_6 mlx5_5 mlx5_4 mlx5_3 mlx5_0");
    CHECK(bundle_summary(node) ==
          "0:mlx5_0:PIX 1:mlx5_3:PIX 2:mlx5_4:PIX 3:mlx5_5:PIX 4:mlx5_6:PIX 5:mlx5_9:PIX "
          "6:mlx5_10:PIX 7:mlx5_11:PIX");
    CHECK(node.bundles[0].rail == 7);
  }
}

TEST_CASE("DGX A100-like: two GPUs share a switch tree with two NICs", "[topology][fixture]") {
  GeneratedFixture fx("dgx-a100");
  Node node = discover_fixture(fx);
  REQUIRE(node.gpus.size() == 8);
  REQUIRE(node.nics.size() == 8);
  check_matrix(node, {
                         "GPU0 X PIX NODE NODE SYS SYS SYS SYS PXB PXB NODE NODE SYS SYS SYS SYS",
                         "GPU1 PIX X NODE NODE SYS SYS SYS SYS PXB PXB NODE NODE SYS SYS SYS SYS",
                         "GPU2 NODE NODE X PIX SYS SYS SYS SYS NODE NODE PXB PXB SYS SYS SYS SYS",
                         "GPU3 NODE NODE PIX X SYS SYS SYS SYS NODE NODE PXB PXB SYS SYS SYS SYS",
                         "GPU4 SYS SYS SYS SYS X PIX NODE NODE SYS SYS SYS SYS PXB PXB NODE NODE",
                         "GPU5 SYS SYS SYS SYS PIX X NODE NODE SYS SYS SYS SYS PXB PXB NODE NODE",
                         "GPU6 SYS SYS SYS SYS NODE NODE X PIX SYS SYS SYS SYS NODE NODE PXB PXB",
                         "GPU7 SYS SYS SYS SYS NODE NODE PIX X SYS SYS SYS SYS NODE NODE PXB PXB",
                         "NIC0 PXB PXB NODE NODE SYS SYS SYS SYS X PIX NODE NODE SYS SYS SYS SYS",
                         "NIC1 PXB PXB NODE NODE SYS SYS SYS SYS PIX X NODE NODE SYS SYS SYS SYS",
                         "NIC2 NODE NODE PXB PXB SYS SYS SYS SYS NODE NODE X PIX SYS SYS SYS SYS",
                         "NIC3 NODE NODE PXB PXB SYS SYS SYS SYS NODE NODE PIX X SYS SYS SYS SYS",
                         "NIC4 SYS SYS SYS SYS PXB PXB NODE NODE SYS SYS SYS SYS X PIX NODE NODE",
                         "NIC5 SYS SYS SYS SYS PXB PXB NODE NODE SYS SYS SYS SYS PIX X NODE NODE",
                         "NIC6 SYS SYS SYS SYS NODE NODE PXB PXB SYS SYS SYS SYS NODE NODE X PIX",
                         "NIC7 SYS SYS SYS SYS NODE NODE PXB PXB SYS SYS SYS SYS NODE NODE PIX X",
                     });
  CHECK(rail_names(node) == "mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_7");
  // Every GPU gets its own NIC although both NICs of its tree are equally close.
  CHECK(bundle_summary(node) ==
        "0:mlx5_0:PXB 1:mlx5_1:PXB 2:mlx5_2:PXB 3:mlx5_3:PXB 4:mlx5_4:PXB 5:mlx5_5:PXB "
        "6:mlx5_6:PXB 7:mlx5_7:PXB");
}

TEST_CASE("switchless two-socket server: PHB, NODE and SYS only", "[topology][fixture]") {
  GeneratedFixture fx("switchless-2s");
  Node node = discover_fixture(fx);
  check_matrix(node, {
                         "GPU0 X NODE SYS SYS PHB NODE SYS SYS",
                         "GPU1 NODE X SYS SYS NODE NODE SYS SYS",
                         "GPU2 SYS SYS X NODE SYS SYS PHB NODE",
                         "GPU3 SYS SYS NODE X SYS SYS NODE NODE",
                         "NIC0 PHB NODE SYS SYS X NODE SYS SYS",
                         "NIC1 NODE NODE SYS SYS NODE X SYS SYS",
                         "NIC2 SYS SYS PHB NODE SYS SYS X NODE",
                         "NIC3 SYS SYS NODE NODE SYS SYS NODE X",
                     });
  CHECK(rail_names(node) == "mlx5_0 mlx5_1 mlx5_2 mlx5_3");
  CHECK(bundle_summary(node) == "0:mlx5_0:PHB 1:mlx5_1:NODE 2:mlx5_2:PHB 3:mlx5_3:NODE");
  CHECK(node.nics[0].link_layer() == "Ethernet");
}

TEST_CASE("degraded node: a NIC at x8 of x16 and a port DOWN are reported", "[topology][fixture]") {
  GeneratedFixture fx("degraded");
  Node node = discover_fixture(fx);
  check_matrix(node, {
                         "GPU0 X SYS PIX SYS",
                         "GPU1 SYS X SYS PIX",
                         "NIC0 PIX SYS X SYS",
                         "NIC1 SYS PIX SYS X",
                     });
  CHECK(bundle_summary(node) == "0:mlx5_0:PIX 1:mlx5_1:PIX");
  CHECK(node.nics[0].pf.pci.link.current_width == 8);
  CHECK(node.nics[0].pf.pci.link.max_width == 16);
  CHECK(node.nics[0].pf.pci.link.degraded());
  CHECK_FALSE(node.nics[1].pf.pci.link.degraded());
  CHECK(node.nics[0].port()->active());
  CHECK_FALSE(node.nics[1].port()->active());
  CHECK(node.nics[1].port()->state == "DOWN");
  CHECK(node.nics[1].port()->phys_state == "Disabled");
  CHECK(node.nics[1].pf.netdevs[0].operstate == "down");
}

TEST_CASE("cloud VM: numa_node -1 and a host bridge per device", "[topology][fixture]") {
  GeneratedFixture fx("cloud-vm");
  Node node = discover_fixture(fx);
  CHECK(node.gpus[0].pci.numa_node == -1);
  CHECK(node.gpus[0].pci.bridges.empty());
  check_matrix(node, {
                         "GPU0 X NODE NODE NODE",
                         "GPU1 NODE X NODE NODE",
                         "NIC0 NODE NODE X NODE",
                         "NIC1 NODE NODE NODE X",
                     });
  CHECK(bundle_summary(node) == "0:mlx5_ib0:NODE 1:mlx5_ib1:NODE");
}

TEST_CASE("rails-lab node: soft-RoCE devices with no PCI parent, found through their netdev",
          "[topology][fixture]") {
  GeneratedFixture fx("lab-rxe");
  Node node = discover_fixture(fx);
  REQUIRE(node.nics.size() == 2);
  CHECK(rail_names(node) == "rxe0 rxe1");
  const NicFunction& pf = node.nics[0].pf;
  CHECK(pf.pci.driver == "e1000e");
  CHECK(pf.netdev_name() == "eth0");
  REQUIRE(pf.rdma);
  CHECK(pf.rdma->software);
  CHECK(pf.rdma->uverbs == "uverbs0");
  REQUIRE(node.nics[0].port());
  CHECK(node.nics[0].port()->rate_gbps == 2.5);
  CHECK(node.nics[0].port()->link_layer == "Ethernet");
  CHECK(node.nics[0].pf.pci.bridges.size() == 3);  // root port, switch upstream, downstream
  // Both directions of the netdev <-> RDMA device link, as the verbs and CNI paths ask.
  const Sysfs sysfs = fx.sysfs();
  CHECK(rdma_netdev(sysfs, "rxe1") == "eth1");
  CHECK(rdma_device_of_netdev(sysfs, "eth1") == "rxe1");
  CHECK(rdma_parent_dir(sysfs, "rxe0")->path() == fx.sys("devices/virtual"));
}
