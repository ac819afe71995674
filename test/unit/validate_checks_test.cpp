// The bring-up checks of railyard-validate run, each on what it reads: ACS and hop links from
// generated config space, port counters and carrier_changes before and after, DCB replies
// built as the kernel sends them, NCCL INFO logs, and MTUs.
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nccl-tests-wrapper/checks/counters.h"
#include "nccl-tests-wrapper/checks/mtu.h"
#include "nccl-tests-wrapper/checks/nccl_path.h"
#include "nccl-tests-wrapper/checks/pcie_acs.h"
#include "nccl-tests-wrapper/checks/roce_qos.h"
#include "nccl-tests-wrapper/checks/timeline.h"
#include "nccl-tests-wrapper/nccl/nccl_log.h"
#include "test/fixturegen/fixture.h"
#include "test/support/temp_dir.h"
#include "topology/discover/discover.h"

using namespace railyard::validate;
using nlohmann::json;
using railyard::testing::TempDir;
namespace topo = railyard::topology;
namespace fs = std::filesystem;

namespace {

// One socket: a switch with a GPU and a NIC under it, as in a DGX.
json one_switch(const json& switch_extra = json::object(), const json& nic_extra = json::object()) {
  json sw = {
      {"ports",
       {{{"gpu", json::object()}},
        {{"nic", json{{"rdma", "mlx5_0"}, {"netdev", "enp1"}, {"link_layer", "Ethernet"}}}}}}};
  if (!switch_extra.is_null()) sw.update(switch_extra);
  if (!nic_extra.is_null()) sw["ports"][1]["nic"].update(nic_extra);
  return {{"host_bridges", {{{"id", "0000:15"}, {"numa", 0}, {"ports", {{{"switch", sw}}}}}}}};
}

struct Fixture {
  TempDir dir;
  topo::Node node;
  explicit Fixture(const json& desc) {
    railyard::fixture::generate(desc, dir.path());
    node = topo::discover(sysfs(), topo::RailsConfig{});
  }
  topo::Sysfs sysfs() const { return topo::Sysfs(dir.path()); }
  fs::path sys(const std::string& rel) const { return dir.path() / "sys" / rel; }
  std::vector<Finding> path_findings() const {
    return judge_bundle_path(sysfs(), "rail 0", "GPU0 <-> mlx5_0", node.gpus.at(0).pci,
                             node.nics.at(0).pf.pci);
  }
};

void put(const fs::path& p, const std::string& v) {
  std::ofstream(p) << v << "\n";
}

std::string read_sample(const std::string& name) {
  std::stringstream ss;
  ss << std::ifstream(std::string(RAILYARD_FIXTURES_DIR) + "/nccl-tests/" + name).rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("pcie-acs: no redirect between the GPU and its NIC is ok, path named",
          "[validate][acs]") {
  Fixture f(one_switch());
  const auto bridges = path_bridges(f.node.gpus[0].pci, f.node.nics[0].pf.pci);
  REQUIRE(bridges.size() == 3);  // GPU's downstream port, the upstream port, the NIC's
  const auto out = f.path_findings();
  REQUIRE(out.size() == 2);
  CHECK(out[0].check == "pcie-acs");
  CHECK(out[0].ok());
  CHECK(out[0].detail ==
        "GPU0 <-> mlx5_0 via 0000:17:00.0, 0000:16:00.0, 0000:17:01.0: no ACS redirect");
  CHECK(out[1].check == "pcie-hops");
  CHECK(out[1].ok());
}

TEST_CASE("pcie-acs: P2P redirect on the switch's ports fails, naming bridge and bits",
          "[validate][acs]") {
  Fixture f(one_switch({{"acs", {"SV", "RR", "CR", "UF"}}}));
  const auto out = f.path_findings();
  CHECK(out[0].fails());
  CHECK(out[0].detail ==
        "GPU0 <-> mlx5_0 via 0000:17:00.0, 0000:16:00.0, 0000:17:01.0: ACS redirects peer-to-peer "
        "traffic through the root complex at 0000:17:00.0: SV RR CR UF; 0000:17:01.0: SV RR CR UF");
  CHECK(out[0].evidence["acs"] == json{{"0000:17:00.0", "SV RR CR UF"},
                                       {"0000:16:00.0", ""},
                                       {"0000:17:01.0", "SV RR CR UF"}});
  CHECK(out[1].evidence["links"]["0000:16:00.0"] == "x16 32.0 GT/s");
}

TEST_CASE("pcie-acs: only egress control or translation blocking is not a redirect",
          "[validate][acs]") {
  Fixture f(one_switch({{"acs", {"TB", "EC"}}}));
  CHECK(f.path_findings()[0].ok());
}

TEST_CASE("pcie-acs: config space cut at 64 bytes (not root) is unknown, never ok",
          "[validate][acs]") {
  Fixture f(one_switch({{"acs", {"RR"}}}));
  const fs::path cfg = f.sys("bus/pci/devices/0000:17:00.0/config");
  fs::resize_file(fs::canonical(cfg), 64);
  const auto out = f.path_findings();
  // The other downstream port still shows its redirect: that is a failure whatever else is
  // unreadable.
  CHECK(out[0].fails());
  Fixture clean(one_switch());
  fs::resize_file(fs::canonical(clean.sys("bus/pci/devices/0000:17:00.0/config")), 64);
  const auto out2 = clean.path_findings();
  CHECK(out2[0].unknown());
  CHECK_THAT(out2[0].detail, Catch::Contains("cannot read the ACS capability of 0000:17:00.0 (64 "
                                             "bytes of config space)"));
}

TEST_CASE("pcie-acs: the capability list is walked, not assumed", "[validate][acs]") {
  std::string c(4096, '\0');
  CHECK(find_acs(c).status == AcsRead::Status::kNoCapability);
  CHECK(find_acs(c.substr(0, 256)).status == AcsRead::Status::kTruncated);
  // AER at 0x100 pointing at ACS at 0x200, control 0x0005 (SV, RR).
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) c[at + static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
  };
  put32(0x100, 0x0001 | 1u << 16 | 0x200u << 20);
  put32(0x200, 0x000d | 1u << 16);
  put32(0x204, 0x0005u << 16 | 0x7f);
  const auto r = find_acs(c);
  REQUIRE(r.status == AcsRead::Status::kFound);
  CHECK(r.control == 0x0005);
  CHECK(acs_bit_names(r.control) == "SV RR");
  put32(0x200, 0x000b | 1u << 16 | 0x100u << 20);  // a vendor capability that loops back
  CHECK(find_acs(c).status == AcsRead::Status::kNoCapability);
}

TEST_CASE("pcie-hops: a switch uplink trained at x8 is named", "[validate][acs]") {
  Fixture f(one_switch({{"link", {{"width", 8}, {"max_width", 16}}}}));
  const auto hops = f.path_findings()[1];
  CHECK(hops.fails());
  CHECK_THAT(hops.detail,
             Catch::EndsWith("hop trained below its link: 0000:16:00.0 x8/x16 32.0 GT/s"));
}

TEST_CASE("port-errors: symbol errors rising during the run fail, with the counts",
          "[validate][counters]") {
  Fixture f(one_switch({}, {{"counters", {{"symbol_error", 3}, {"np_cnp_sent", 10}}}}));
  const auto before = read_rail_counters(f.sysfs(), "mlx5_0", 1, "enp1");
  CHECK(before.values.at("counters/symbol_error") == 3);
  CHECK(before.values.at("hw_counters/np_cnp_sent") == 10);
  CHECK(before.carrier_changes == 2u);
  const fs::path port = f.sys("class/infiniband/mlx5_0/ports/1");
  put(port / "counters/symbol_error", "15");
  put(port / "hw_counters/np_cnp_sent", "510");
  const auto after = read_rail_counters(f.sysfs(), "mlx5_0", 1, "enp1");
  const auto bad = judge_port_errors("rail 0", before, after, 4.0, {});
  CHECK(bad.fails());
  CHECK(bad.detail == "symbol_error +12 (3 -> 15) over 4.0 s");
  // Congestion is reported, and fails only above a threshold the config gives.
  put(port / "counters/symbol_error", "3");
  const auto quiet = read_rail_counters(f.sysfs(), "mlx5_0", 1, "enp1");
  const auto ok = judge_port_errors("rail 0", before, quiet, 4.0, {});
  CHECK(ok.ok());
  CHECK_THAT(ok.detail, Catch::Contains("np_cnp_sent +500"));
  const auto over = judge_port_errors("rail 0", before, quiet, 4.0, {{{"np_cnp_sent", 100}}, 0});
  CHECK(over.fails());
  CHECK(over.detail == "np_cnp_sent +500 above 100 over 4.0 s");
  // A threshold lets a known-noisy error counter grow a little.
  CHECK(judge_port_errors("rail 0", before, after, 4.0, {{{"symbol_error", 20}}, 0}).ok());
  CHECK(counter_delta(before, after).at("counters/symbol_error") == 12);
}

TEST_CASE("port-errors: a port without counters is unknown", "[validate][counters]") {
  CHECK(judge_port_errors("rail 0", {}, {}, 1.0, {}).unknown());
}

TEST_CASE("link-flaps: carrier_changes and link_downed over the run", "[validate][counters]") {
  Fixture f(one_switch());
  const auto before = read_rail_counters(f.sysfs(), "mlx5_0", 1, "enp1");
  CHECK(judge_link_flaps("rail 0", before, before, 2.0, {}).ok());
  put(f.sys("class/net/enp1/carrier_changes"), "4");  // down and up: one flap
  auto after = read_rail_counters(f.sysfs(), "mlx5_0", 1, "enp1");
  auto flap = judge_link_flaps("rail 0", before, after, 2.0, {});
  CHECK(flap.fails());
  CHECK(flap.detail == "1 flap(s) over 2.0 s (carrier_changes +2, link_downed +0)");
  CHECK(judge_link_flaps("rail 0", before, after, 2.0, {{}, 1}).ok());
  put(f.sys("class/infiniband/mlx5_0/ports/1/counters/link_downed"), "3");
  after = read_rail_counters(f.sysfs(), "mlx5_0", 1, "enp1");
  CHECK(judge_link_flaps("rail 0", before, after, 2.0, {}).detail ==
        "3 flap(s) over 2.0 s (carrier_changes +2, link_downed +3)");
  CHECK(judge_link_flaps("rail 0", {}, {}, 2.0, {}).unknown());
}

namespace {

// An RTM_GETDCB reply as dcbnl_ieee_fill() builds it: ETS, PFC and the APP table nested in
// DCB_ATTR_IEEE.
DcbState reply(uint8_t pfc_en, int tc_of_3, uint8_t bw_of_tc, std::vector<dcb_app> apps) {
  nl_msg* msg = nlmsg_alloc_simple(RTM_GETDCB, 0);
  dcbmsg head{};
  head.cmd = DCB_CMD_IEEE_GET;
  nlmsg_append(msg, &head, sizeof head, NLMSG_ALIGNTO);
  nla_put_string(msg, DCB_ATTR_IFNAME, "enp1");
  nlattr* ieee = nla_nest_start(msg, DCB_ATTR_IEEE);
  ieee_ets ets{};
  for (int p = 0; p < 8; ++p) ets.prio_tc[p] = 0;
  ets.prio_tc[3] = static_cast<uint8_t>(tc_of_3);
  for (int tc = 0; tc < 8; ++tc) ets.tc_tsa[tc] = IEEE_8021QAZ_TSA_ETS;
  ets.tc_tx_bw[0] = static_cast<uint8_t>(100 - bw_of_tc);
  ets.tc_tx_bw[tc_of_3] = bw_of_tc;
  nla_put(msg, DCB_ATTR_IEEE_ETS, sizeof ets, &ets);
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = pfc_en;
  nla_put(msg, DCB_ATTR_IEEE_PFC, sizeof pfc, &pfc);
  nlattr* table = nla_nest_start(msg, DCB_ATTR_IEEE_APP_TABLE);
  for (const auto& a : apps) nla_put(msg, DCB_ATTR_IEEE_APP, sizeof a, &a);
  nla_nest_end(msg, table);
  nla_nest_end(msg, ieee);
  DcbState s = decode_dcb_reply(nlmsg_hdr(msg));
  nlmsg_free(msg);
  return s;
}

const EcnState kEcnOn{true, true};

}  // namespace

TEST_CASE("roce-qos: PFC on priority 3, its TC with ETS share, ECN on: ok", "[validate][dcb]") {
  const auto s = reply(1u << 3, 3, 50,
                       {{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26}, {IEEE_8021QAZ_APP_SEL_DSCP, 0, 0}});
  REQUIRE(s.answered);
  CHECK(s.pfc_enabled == uint8_t{8});
  CHECK(s.apps.size() == 2);
  const auto f = judge_roce_qos("rail 0", "enp1", "mlx5_core", s, kEcnOn, 3, true);
  CHECK(f.ok());
  CHECK(f.detail ==
        "PFC on priority 3 (on: 3); priority 3 -> TC 3 (ETS 50%); trust DSCP (1 of 2 DSCP values "
        "on priority 3); ECN on priority 3");
}

TEST_CASE("roce-qos: PFC on the wrong priority fails, naming where it is", "[validate][dcb]") {
  const auto f =
      judge_roce_qos("rail 0", "enp1", "mlx5_core", reply(1u << 4, 3, 50, {}), kEcnOn, 3, true);
  CHECK(f.fails());
  CHECK(f.detail == "PFC off on priority 3 (on: 4)");
}

TEST_CASE("roce-qos: a TC without ETS bandwidth, and ECN off, fail", "[validate][dcb]") {
  const auto f = judge_roce_qos("rail 0", "enp1", "mlx5_core", reply(1u << 3, 5, 0, {}),
                                EcnState{false, true}, 3, true);
  CHECK(f.fails());
  CHECK(f.detail ==
        "priority 3 -> TC 5 (ETS 0%): no ETS bandwidth; ECN off on priority 3 (roce_np)");
  // ECN not required: reported, not failed.
  CHECK_THAT(judge_roce_qos("rail 0", "enp1", "mlx5_core", reply(8, 3, 50, {}),
                            EcnState{false, false}, 3, false)
                 .detail,
             Catch::Contains("ECN off on priority 3 (roce_np and roce_rp)"));
}

TEST_CASE("roce-qos: no DCB answer is unknown, never ok", "[validate][dcb]") {
  DcbState none;
  none.why = "the driver implements no DCB operations (EOPNOTSUPP)";
  const auto f = judge_roce_qos("rail 0", "eth1", "e1000e", none, {}, 3, true);
  CHECK(f.unknown());
  CHECK_FALSE(f.ok());
  CHECK(f.detail ==
        "no DCB answer for eth1 (e1000e): the driver implements no DCB operations (EOPNOTSUPP)");
}

TEST_CASE("roce-qos: ECN switches read from the netdev's sysfs", "[validate][dcb]") {
  Fixture f(one_switch({}, {{"ecn", {{"np", {3}}, {"rp", json::array()}}}}));
  const auto on3 = read_ecn(f.sysfs(), "enp1", 3);
  CHECK(on3.np == true);
  CHECK(on3.rp == false);
  CHECK_FALSE(read_ecn(f.sysfs(), "enp1", 4).np.value());
  Fixture g(one_switch({}, {{"ecn", false}}));
  CHECK_FALSE(read_ecn(g.sysfs(), "enp1", 3).np.has_value());
}

TEST_CASE("nccl-path: a device index NCCL never prints is left out, not allocated",
          "[validate][nccl]") {
  // Found by peer_input_fuzz: "[9999999990]" made the list resize to ten billion entries.
  const auto use = parse_nccl_log(
      "NCCL INFO NET/IB : Using [9999999990]mlx5_9:1/IB [99999999999999999999999]mlx5_8:1/IB "
      "[1]mlx5_1:1/IB\n");
  CHECK(use.ib_devices == std::vector<std::string>{"", "mlx5_1:1"});
}

TEST_CASE("nccl-path: NET/IB on the rail's HCA with GDRDMA is ok", "[validate][nccl]") {
  const auto use = parse_nccl_log(read_sample("nccl-info-ib-gdr.txt"));
  CHECK(use.network == "IB");
  CHECK(use.ib_devices == std::vector<std::string>{"mlx5_0:1"});
  REQUIRE(use.channels.size() == 4);
  CHECK(use.channels[0].gdr);
  const auto f = judge_nccl_path("rail 0 (mlx5_0)", use, {"mlx5_0"}, "require");
  CHECK(f.ok());
  CHECK(f.detail == "NET/IB over mlx5_0:1 on 4 channel(s), GDRDMA on 4");
  // Another rail under test: the same log names the wrong HCA.
  CHECK(judge_nccl_path("rail 1 (mlx5_3)", use, {"mlx5_3"}, "off").fails());
}

TEST_CASE("nccl-path: a fallback to NET/Socket fails, quoting NCCL", "[validate][nccl]") {
  const auto f = judge_nccl_path(
      "rail 0 (mlx5_0)", parse_nccl_log(read_sample("nccl-info-socket.txt")), {"mlx5_0"}, "warn");
  CHECK(f.fails());
  CHECK_THAT(f.detail, Catch::StartsWith("NCCL used NET/Socket, not NET/IB: \"node-a:41327:41337 "
                                         "[0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via "
                                         "NET/Socket/0\""));
}

TEST_CASE("nccl-path: NCCL_IB_HCA as a prefix ran over mlx5_10, not mlx5_1", "[validate][nccl]") {
  const auto use = parse_nccl_log(read_sample("nccl-info-wrong-hca.txt"));
  CHECK(use.ib_devices == std::vector<std::string>{"mlx5_1:1", "mlx5_10:1", "mlx5_11:1"});
  const auto f = judge_nccl_path("rail 1 (mlx5_1)", use, {"mlx5_1"}, "warn");
  CHECK(f.fails());
  CHECK_THAT(f.detail, Catch::StartsWith("channel 00/0 used mlx5_10:1, not mlx5_1"));
}

TEST_CASE("nccl-path: GDRDMA missing warns or fails as the config says", "[validate][nccl]") {
  std::string log = read_sample("nccl-info-ib-gdr.txt");
  for (size_t at; (at = log.find("/GDRDMA")) != std::string::npos;) log.erase(at, 7);
  const auto use = parse_nccl_log(log);
  const auto warn = judge_nccl_path("rail 0", use, {"mlx5_0"}, "warn");
  CHECK(warn.warns());
  CHECK_FALSE(warn.fails());
  CHECK(judge_nccl_path("rail 0", use, {"mlx5_0"}, "require").fails());
  CHECK(judge_nccl_path("rail 0", use, {"mlx5_0"}, "off").ok());
}

TEST_CASE("nccl-path: no INFO lines, or no network, is unknown", "[validate][nccl]") {
  CHECK(judge_nccl_path("rail 0", parse_nccl_log(read_sample("v2021.txt")), {"mlx5_0"}, "warn")
            .unknown());
  CHECK(judge_nccl_path("rail 0", parse_nccl_log("h:1:1 [0] NCCL INFO Channel 00/02 :    0   1\n"),
                        {"mlx5_0"}, "warn")
            .unknown());
}

// NCCL 2.4-2.6 print a channel as "Ring NN : ... [send|receive] via NET/<net>/<dev>[/GDRDMA]"
// (src/transport/net.cc: ranks alone in 2.4, with their GPU's bus ID in 2.5 and 2.6); only 2.6
// also says "Using network ...". The logs below are shaped as NVIDIA/nccl issues #226 (2.4,
// Socket), #302 (2.5.6, IB) and Mellanox/nv_peer_memory#56 (2.4.7, IB) show them.
namespace {

const char* kNccl24Ib =
    "master_node:20:289 [0] NCCL INFO NET/Socket : Using [0]ib0:192.168.11.1<0>\n"
    "master_node:20:289 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
    "master_node:20:289 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:192.168.11.1<0>\n"
    "NCCL version 2.4.7+cuda10.0\n"
    "master_node:20:298 [0] NCCL INFO Setting affinity for GPU 0 to 0fff\n"
    "master_node:20:298 [0] NCCL INFO Ring 00 : 1 -> 0 [receive] via NET/IB/0/GDRDMA\n"
    "master_node:20:298 [0] NCCL INFO Ring 00 : 0 -> 1 [send] via NET/IB/0/GDRDMA\n"
    "master_node:20:298 [0] NCCL INFO Ring 01 : 1 -> 0 [receive] via NET/IB/0/GDRDMA\n"
    "master_node:20:298 [0] NCCL INFO Ring 01 : 0 -> 1 [send] via NET/IB/0/GDRDMA\n"
    "master_node:20:298 [0] NCCL INFO Using 256 threads, Min Comp Cap 7, Trees disabled\n"
    "master_node:20:298 [0] NCCL INFO comm 0x7f1c8c001b60 rank 0 nranks 2 cudaDev 0 nvmlDev 0 - "
    "Init COMPLETE\n";

const char* kNccl24Socket =
    "ip-172-31-8-230:45336:45336 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
    "ip-172-31-8-230:45336:45336 [0] NCCL INFO NET/IB : No device found.\n"
    "ip-172-31-8-230:45336:45336 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.8.230<0>\n"
    "ip-172-31-8-230:45336:45341 [0] NCCL INFO CUDA Dev 0[0], Socket NIC distance :  PHB\n"
    "ip-172-31-8-230:45336:45341 [0] NCCL INFO Ring 00 : 35 -> 36 [receive] via NET/Socket/0\n"
    "ip-172-31-8-230:45336:45341 [0] NCCL INFO Ring 00 : 36 -> 37 [send] via NET/Socket/0\n";

// 2.5.6, one node of eight GPUs: rings inside the node over P2P and shared memory, the network
// only at the node's edge.
const char* kNccl25Mixed =
    "[155] crow-19:5330:5330 [3] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB [1]mlx5_3:1/IB "
    "[2]mlx5_0:1/IB [3]mlx5_2:1/RoCE ; OOB eth0:10.100.62.64<0>\n"
    "[155] crow-19:5330:5499 [3] NCCL INFO Trees [0] 154/-1/-1->155->153|153->155->154/-1/-1\n"
    "[155] crow-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC\n"
    "[155] crow-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 153[1b000] via direct shared "
    "memory\n"
    "[155] crow-19:5330:5499 [3] NCCL INFO Ring 01 : 146[3d000] -> 155[3d000] [receive] via "
    "NET/IB/2/GDRDMA\n"
    "[155] crow-19:5330:5499 [3] NCCL INFO Ring 01 : 155[3d000] -> 162[3d000] [send] via "
    "NET/IB/2/GDRDMA\n";

// 2.6.4 says which network it chose, and keeps the Ring lines of 2.5 (its net.cc's format
// strings: no 2.6 log was at hand).
std::string nccl26(const std::string& network, const std::string& via) {
  return "node1:1234:1234 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB [1]mlx5_10:1/IB ; OOB "
         "eth0:10.0.0.1<0>\n"
         "NCCL version 2.6.4+cuda10.2\n"
         "node1:1234:1234 [0] NCCL INFO Using network " +
         network +
         "\n"
         "node1:1234:1280 [0] NCCL INFO Ring 00 : 3[b2000] -> 4[1a000] [receive] via " +
         via +
         "\n"
         "node1:1234:1280 [0] NCCL INFO Ring 00 : 4[1a000] -> 5[1b000] via P2P/IPC\n"
         "node1:1234:1280 [0] NCCL INFO Ring 01 : 3[b2000] -> 4[1a000] [receive] via " +
         via + "\n";
}

}  // namespace

TEST_CASE("nccl-path: NCCL 2.4 Ring lines over NET/IB are read and pass", "[validate][nccl]") {
  const auto use = parse_nccl_log(kNccl24Ib);
  CHECK_FALSE(use.network);  // 2.4 prints no "Using network"
  CHECK(use.version == "2.4.7");
  REQUIRE(use.channels.size() == 4);
  CHECK(use.channels[0].channel == "00");
  CHECK(use.channels[0].transport == "IB");
  CHECK(use.channels[0].device == 0);
  const auto f = judge_nccl_path("rail 0 (mlx5_0)", use, {"mlx5_0"}, "require");
  CHECK(f.ok());
  CHECK(f.detail == "NET/IB over mlx5_0:1 on 4 channel(s), GDRDMA on 4");
  CHECK(f.evidence["nccl_version"] == "2.4.7");
}

TEST_CASE("nccl-path: NCCL 2.4 falling back to NET/Socket is named, not unknown",
          "[validate][nccl]") {
  const auto use = parse_nccl_log(kNccl24Socket);
  REQUIRE(use.channels.size() == 2);
  const auto f = judge_nccl_path("rail 0 (mlx5_0)", use, {"mlx5_0"}, "warn");
  CHECK_FALSE(f.unknown());
  CHECK(f.fails());
  CHECK(f.detail ==
        "NCCL used NET/Socket, not NET/IB: \"ip-172-31-8-230:45336:45341 [0] NCCL INFO Ring 00 : "
        "35 -> 36 [receive] via NET/Socket/0\"");
}

TEST_CASE("nccl-path: NCCL 2.5 P2P and SHM rings are not network channels", "[validate][nccl]") {
  const auto use = parse_nccl_log(kNccl25Mixed);
  REQUIRE(use.channels.size() == 2);  // the two NET/IB lines only
  CHECK(use.channels[0].device == 2);
  CHECK(use.channels[1].gdr);
  const auto f = judge_nccl_path("rail 2 (mlx5_0)", use, {"mlx5_0"}, "require");
  CHECK(f.ok());
  CHECK(f.detail == "NET/IB over mlx5_0:1 on 2 channel(s), GDRDMA on 2");
  CHECK(judge_nccl_path("rail 0 (mlx5_1)", use, {"mlx5_1"}, "off").fails());
}

TEST_CASE("nccl-path: NCCL 2.6 Ring lines name the HCA and a Socket fallback", "[validate][nccl]") {
  const auto ib = judge_nccl_path("rail 1 (mlx5_1)", parse_nccl_log(nccl26("IB", "NET/IB/0")),
                                  {"mlx5_1"}, "off");
  CHECK(ib.ok());
  CHECK(ib.detail == "NET/IB over mlx5_1:1 on 2 channel(s), GDRDMA on 0");
  // NCCL_IB_HCA=mlx5_1 without '=' also matches mlx5_10: NCCL's device 1.
  const auto wrong = judge_nccl_path(
      "rail 1 (mlx5_1)", parse_nccl_log(nccl26("IB", "NET/IB/1/GDRDMA")), {"mlx5_1"}, "off");
  CHECK(wrong.fails());
  CHECK_THAT(wrong.detail, Catch::StartsWith("channel 00 used mlx5_10:1, not mlx5_1: \""));
  const auto socket = judge_nccl_path(
      "rail 1 (mlx5_1)", parse_nccl_log(nccl26("Socket", "NET/Socket/0")), {"mlx5_1"}, "warn");
  CHECK(socket.fails());
  CHECK_THAT(socket.detail,
             Catch::StartsWith("NCCL used NET/Socket, not NET/IB: \"node1:1234:1280 "
                               "[0] NCCL INFO Ring 00 : 3[b2000] -> 4[1a000] [receive] via "
                               "NET/Socket/0\""));
}

TEST_CASE("nccl-path: NCCL 2.3 and older are unknown, and the reason says why",
          "[validate][nccl]") {
  // As NVIDIA/nccl#179 shows 2.3.7: a device per line, and Ring lines without [send]/[receive].
  const auto f = judge_nccl_path(
      "rail 0 (mlx5_1)",
      parse_nccl_log(
          "learnfair0536:46393:46393 [0] NCCL INFO NET/IB: [0] mlx5_1:1/IB\n"
          "learnfair0536:46393:46393 [0] NCCL INFO Using internal Network IB\n"
          "NCCL version 2.3.7+cuda9.0\n"
          "learnfair0536:46393:46408 [0] NCCL INFO Ring 00 : 3 -> 0 via NET/IB/0/GDRDMA\n"),
      {"mlx5_1"}, "warn");
  CHECK(f.unknown());
  CHECK(f.detail ==
        "NCCL 2.3.7 prints its network channels in a form this check does not read "
        "(it reads NCCL 2.4 and later)");
}

TEST_CASE("mtu: netdev, port and fabric agree, or the mismatch is named", "[validate][mtu]") {
  CHECK(judge_mtu("r", {9000, true, std::nullopt}, 0, 4096).ok());
  CHECK(judge_mtu("r", {9000, true, std::nullopt}, 0, 4096).detail ==
        "netdev MTU 9000, port MTU 4096 (derived from the netdev), fabric 4096");
  const auto small = judge_mtu("r", {1500, true, std::nullopt}, 0, 4096);
  CHECK(small.fails());
  CHECK_THAT(small.detail,
             Catch::StartsWith("port MTU 1024 is not the fabric's 4096 (the netdev MTU "
                               "is too small for it)"));
  // The device's answer wins over the derivation.
  CHECK(judge_mtu("r", {9000, true, 2048}, 0, 4096).fails());
  CHECK(judge_mtu("r", {4092, false, std::nullopt}, 0, 4096).unknown());
  CHECK(judge_mtu("r", {4092, false, 4096}, 4092, 4096).ok());
  CHECK(judge_mtu("r", {2044, false, 4096}, 4092, 0).fails());
}

TEST_CASE("timeline: every byte a rail moved is in its series, a stalled rail is flat",
          "[validate][timeline]") {
  Fixture f(one_switch());
  const auto src = rail_byte_counter(f.sysfs(), "mlx5_0", 1, "enp1");
  CHECK(src.name == "port_xmit_data");
  CHECK(src.bytes_per_unit == 4);
  const auto netdev_src = rail_byte_counter(f.sysfs(), "", 1, "enp1");
  CHECK(netdev_src.name == "tx_bytes");
  TimelineSampler sampler({{"moving", src}, {"stalled", netdev_src}}, std::chrono::milliseconds(5));
  put(src.file, "250000000");  // 1 GB in 4-byte words
  const Timeline t = sampler.stop();
  REQUIRE(!t.t.empty());
  REQUIRE(t.rails.size() == 2);
  double moved = 0, prev = 0;
  for (size_t i = 0; i < t.t.size(); ++i) {
    moved += t.rails[0].gbps[i] * (t.t[i] - prev);
    prev = t.t[i];
  }
  CHECK(moved == Approx(1.0).epsilon(1e-6));
  for (double v : t.rails[1].gbps) CHECK(v == 0);
  CHECK_THAT(timeline_svg(t), Catch::Contains("time (s)"));
}
