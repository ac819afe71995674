// GID, MTU and registration choices for verbs rails (rdma/transport/verbs_choice.h), on generated
// sysfs fixtures shaped as a RoCE and an InfiniBand node show them.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "rdma/transport/verbs_choice.h"
#include "test/fixturegen/fixture.h"
#include "test/support/temp_dir.h"

using namespace railyard::rdma;
using railyard::testing::TempDir;
using railyard::topology::Gid;
using railyard::topology::RdmaPort;
using railyard::topology::Sysfs;

namespace {

// A RoCE NIC (netdev eth2, 10.0.0.5, MTU 9000), a RoCE NIC on a 1500 MTU netdev without an
// address, and an InfiniBand HCA.
void node(const std::filesystem::path& root) {
  railyard::fixture::generate(nlohmann::json::parse(R"({"host_bridges": [{"id": "0000:10",
      "numa": 0, "ports": [
        {"nic": {"rdma": "mlx5_0", "netdev": "eth2", "link_layer": "Ethernet", "ipv4": "10.0.0.5"}},
        {"nic": {"rdma": "mlx5_1", "netdev": "eth3", "link_layer": "Ethernet", "mtu": 1500}},
        {"nic": {"rdma": "mlx5_2", "netdev": "ib0"}}]}]})"),
                              root);
}

}  // namespace

TEST_CASE("IPv4-mapped GIDs are written as sysfs writes them", "[rdma][verbs]") {
  CHECK(ipv4_mapped_gid("10.0.0.5") == "0000:0000:0000:0000:0000:ffff:0a00:0005");
  CHECK(ipv4_mapped_gid("192.168.200.1") == "0000:0000:0000:0000:0000:ffff:c0a8:c801");
  CHECK_THROWS_AS(ipv4_mapped_gid("eth0"), std::invalid_argument);
}

TEST_CASE("a RoCE rail takes the RoCE v2 GID of its own address", "[rdma][verbs]") {
  TempDir dir;
  node(dir.path());
  const Sysfs sysfs(dir.path());
  const RailPlan p = plan_rail(sysfs, "mlx5_0:1", "10.0.0.5", -1);
  CHECK(p.device == "mlx5_0");
  CHECK(p.port == 1);
  CHECK(p.roce);
  CHECK(p.gid.index == 3);  // 0, 1: link-local v1/v2; 2: IPv4-mapped v1; 3: IPv4-mapped v2
  CHECK(p.gid.type == "RoCE v2");
  CHECK(p.gid.gid == "0000:0000:0000:0000:0000:ffff:0a00:0005");
  CHECK_THAT(p.gid.why, Catch::Contains("rail's own"));
  CHECK(p.mtu == 4096);  // a 9000-byte netdev

  // The netdev names its RDMA device.
  CHECK(plan_rail(sysfs, "eth2", "10.0.0.5", -1).device == "mlx5_0");
  CHECK(plan_rail(sysfs, "eth2", "10.0.0.5", -1).gid.index == 3);

  // NCCL_IB_GID_INDEX wins when the entry exists, and is an error when it does not.
  CHECK(plan_rail(sysfs, "mlx5_0", "10.0.0.5", 2).gid.type == "IB/RoCE v1");
  CHECK_THROWS_WITH(plan_rail(sysfs, "mlx5_0", "10.0.0.5", 9),
                    Catch::Contains("no GID at index 9"));
}

TEST_CASE("without an address RoCE falls back to the link-local v2 GID and MTU follows the netdev",
          "[rdma][verbs]") {
  TempDir dir;
  node(dir.path());
  const RailPlan p = plan_rail(Sysfs(dir.path()), "mlx5_1", "", -1);
  CHECK(p.gid.index == 1);
  CHECK(p.gid.type == "RoCE v2");
  CHECK_THAT(p.gid.why, Catch::Contains("link-local"));
  CHECK(p.mtu == 1024);  // 1500 - RoCEv2 headers leaves room for 1024, not 2048
}

TEST_CASE("an InfiniBand rail takes the port GID and a missing device is named", "[rdma][verbs]") {
  TempDir dir;
  node(dir.path());
  const Sysfs sysfs(dir.path());
  const RailPlan p = plan_rail(sysfs, "mlx5_2:1", "", -1);
  CHECK_FALSE(p.roce);
  CHECK(p.gid.index == 0);
  CHECK(p.mtu == 0);  // the port's active MTU decides, at run time
  CHECK_THROWS_WITH(plan_rail(sysfs, "mlx5_9", "", -1),
                    Catch::Contains("'mlx5_9' is not an RDMA device"));
  CHECK_THROWS_WITH(plan_rail(sysfs, "mlx5_0:2", "", -1), Catch::Contains("mlx5_0 port 2"));
  CHECK_THROWS_WITH(plan_rail(sysfs, "mlx5_0:x", "", -1), Catch::Contains("not a number"));
}

TEST_CASE("GID preference: own address > IPv4-mapped > global IPv6 > link-local and v2 before v1",
          "[rdma][verbs]") {
  RdmaPort port;
  port.link_layer = "Ethernet";
  port.gids = {{0, "fe80:0000:0000:0000:0000:0000:0000:0001", "IB/RoCE v1", "eth0"},
               {1, "fe80:0000:0000:0000:0000:0000:0000:0001", "RoCE v2", "eth0"},
               {2, "fd00:0000:0000:0000:0000:0000:0000:0007", "RoCE v2", "eth0"},
               {3, ipv4_mapped_gid("10.1.0.1"), "IB/RoCE v1", "eth0"},
               {4, ipv4_mapped_gid("10.1.0.1"), "RoCE v2", "eth0"},
               {5, ipv4_mapped_gid("10.2.0.1"), "RoCE v2", "eth0"}};
  CHECK(choose_gid(port, "10.2.0.1")->index == 5);
  CHECK(choose_gid(port, "10.9.9.9")->index == 4);  // not ours: the first IPv4-mapped v2
  port.gids.erase(port.gids.begin() + 4, port.gids.end());
  CHECK(choose_gid(port, "10.1.0.1")->index == 2);  // v2 global IPv6 beats v1 IPv4-mapped
  port.gids.erase(port.gids.begin() + 1, port.gids.begin() + 3);
  CHECK(choose_gid(port, "10.1.0.1")->index == 3);  // only v1 left: its own address
  port.gids.clear();
  CHECK_FALSE(choose_gid(port, "10.1.0.1"));
}

TEST_CASE("RoCE MTU from the netdev's as the kernel computes it and both ends agree on the smaller",
          "[rdma][verbs]") {
  CHECK(roce_mtu_for_netdev(9000) == 4096);
  CHECK(roce_mtu_for_netdev(4200) == 4096);
  CHECK(roce_mtu_for_netdev(4191) == 2048);
  CHECK(roce_mtu_for_netdev(1500) == 1024);
  CHECK(roce_mtu_for_netdev(1120) == 1024);
  CHECK(roce_mtu_for_netdev(1119) == 512);
  CHECK(roce_mtu_for_netdev(300) == 0);
  CHECK(path_mtu(4096, 1024) == 1024);
  CHECK(path_mtu(2048, 4096) == 2048);
}

TEST_CASE("GPU memory registers by dma-buf or else nvidia-peermem or else is staged",
          "[rdma][verbs]") {
  CHECK(choose_registration({false, true, true}) == RegPath::kHost);
  CHECK(choose_registration({true, true, true}) == RegPath::kDmaBuf);
  CHECK(choose_registration({true, false, true}) == RegPath::kPeerMem);
  CHECK(choose_registration({true, false, false}) == RegPath::kStaged);
  CHECK(choose_registration({true, true, true}, "peermem") == RegPath::kPeerMem);
  CHECK(choose_registration({true, true, false}, "staged") == RegPath::kStaged);
  CHECK_THROWS_WITH(choose_registration({true, false, true}, "dmabuf"), Catch::Contains("dma-buf"));
  CHECK_THROWS_WITH(choose_registration({true, true, false}, "peermem"),
                    Catch::Contains("nvidia_peermem is not loaded"));
  CHECK_THROWS_WITH(choose_registration({false, false, false}, "dmabuf"),
                    Catch::Contains("host memory"));
  CHECK_THROWS(choose_registration({true, true, true}, "magic"));

  TempDir dir;
  CHECK_FALSE(peermem_loaded(dir.path()));
  std::filesystem::create_directories(dir.path() / "sys/module/nvidia_peermem");
  CHECK(peermem_loaded(dir.path()));
}

TEST_CASE("the next rank's receive slots must be ours: a larger slot would overrun our staging",
          "[rdma][verbs]") {
  CHECK(peer_slots_problem(8, 1 << 20, 8, 1 << 20, "rank 1 (rail 0)").empty());
  CHECK(peer_slots_problem(8, 4 << 20, 8, 1 << 20, "rank 1 (rail 0)") ==
        "rank 1 (rail 0) runs 8 slots of 4194304 bytes, this rank 8 of 1048576: give every rank "
        "the same --slots and --slot-size");
  CHECK_THAT(peer_slots_problem(16, 1 << 20, 8, 1 << 20, "rank 1 (rail 0)"),
             Catch::Contains("give every rank the same --slots and --slot-size"));
  CHECK_THAT(peer_slots_problem(0, 0, 8, 1 << 20, "rank 1 (rail 0)"),
             Catch::Contains("sent no receive slots"));
}
