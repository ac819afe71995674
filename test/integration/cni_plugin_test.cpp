// railyard-cni driven exactly as a runtime drives it (env + stdin, CNI_PATH with Debian's
// host-local and static IPAM), on a simulated node: 8 rails in and out of a pod, traffic, CHECK,
// faults at each step, crashes, storms, and bad input.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cni/plugin/rdma_netns.h"
#include "dra/handoff/handoff.h"
#include "net/ip.h"
#include "test/support/cni_rig.h"

using namespace railyard::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

int code_of(const RunResult& r) {
  if (r.exit_code == 0) return 0;
  auto j = json::parse(r.out, nullptr, false);
  return j.is_object() ? j.value("code", -1) : -1;
}

size_t files_in(const std::string& dir) {
  if (!fs::exists(dir)) return 0;
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() != ".lock" && e.path().filename() != "lock")
      ++n;
  return n;
}

// host-local's allocations: one file per IP under dataDir/<network name>/.
size_t ipam_allocations(const CniRig& rig) {
  size_t n = 0;
  const fs::path d = fs::path(rig.ipam_dir()) / "rails";
  if (!fs::exists(d)) return 0;
  for (const auto& e : fs::directory_iterator(d))
    if (railyard::net::IpAddress::parse(e.path().filename().string())) ++n;
  return n;
}

}  // namespace

TEST_CASE("8 rails attached to one pod and detached: results, traffic, and the node as before",
          "[cni][netns]") {
  CniRig rig(8);
  TestNetns pod("pod");
  const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);

  for (int k = 0; k < 8; ++k) {
    const std::string ifname = "net" + std::to_string(k + 1), n = std::to_string(k);
    auto r = rig.cni("ADD", pod, ifname, rig.config(k, "1.1.0"));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json res = json::parse(r.out);
    CHECK(res["cniVersion"] == "1.1.0");
    REQUIRE(res["interfaces"].size() == 1);
    CHECK(res["interfaces"][0]["name"] == ifname);
    CHECK(res["interfaces"][0]["sandbox"] == pod.path());
    CHECK(res["interfaces"][0]["pciID"] == rig.vf_pci[k]);
    const std::string mac = res["interfaces"][0]["mac"];
    CHECK(mac == json::parse(pod.ip("-j link show dev " + ifname))[0]["address"]);
    CHECK(res["ips"] ==
          json::parse(R"([{"address": "10.10.)" + n + R"(.2/24", "gateway": "10.10.)" + n +
                      R"(.1", "interface": 0}])"));
    CHECK(res["dns"] == json::object());
  }
  // The VFs left the node; the pod has them, named, up, addressed, with their rail's table.
  for (int k = 0; k < 8; ++k) {
    const std::string n = std::to_string(k), ifname = "net" + std::to_string(k + 1);
    CHECK_THROWS(rig.node.ip("link show dev ryvf" + n));
    CHECK_THAT(pod.ip("-o addr show dev " + ifname), Catch::Contains("inet 10.10." + n + ".2/24"));
    CHECK(pod.ip("rule show priority " + std::to_string(1000 + k)) ==
          std::to_string(1000 + k) + ":\tfrom 10.10." + n + ".2 lookup " + std::to_string(100 + k) +
              "\n");
    CHECK(pod.ip("route show table " + std::to_string(100 + k)) ==
          "default via 10.10." + n + ".1 dev " + ifname + " proto static\n10.10." + n +
              ".0/24 dev " + ifname + " proto static scope link src 10.10." + n + ".2\n");
    CHECK(sh("ip netns exec " + pod.name() + " cat /proc/sys/net/ipv4/conf/" + ifname +
             "/arp_ignore") == "1\n");
    CHECK(sh("ip netns exec " + pod.name() + " cat /proc/sys/net/ipv4/conf/" + ifname +
             "/arp_announce") == "2\n");
  }
  std::vector<const TestNetns*> peers;
  for (const auto& p : rig.peers) peers.push_back(p.get());
  const auto remote = *railyard::net::IpAddress::parse("10.99.0.1");
  for (int k = 0; k < 8; ++k)
    CHECK(which_peer_receives(pod,
                              *railyard::net::IpAddress::parse("10.10." + std::to_string(k) + ".2"),
                              peers, remote, 41000 + k) == k);
  for (int k = 0; k < 8; ++k) {
    auto r = rig.cni("CHECK", pod, "net" + std::to_string(k + 1), rig.config(k));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
  }
  CHECK(ipam_allocations(rig) == 8);

  for (int k = 0; k < 8; ++k) {
    auto r = rig.cni("DEL", pod, "net" + std::to_string(k + 1), rig.config(k));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
  }
  CHECK(rig.node_links() == node_before);
  CHECK(CniRig::snapshot(pod) == pod_before);
  CHECK(ipam_allocations(rig) == 0);
  CHECK(files_in(rig.state_dir()) == 0);
}

TEST_CASE("static IPAM, MTU, MAC, and CHECK naming what changed", "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod("pod");
  json cfg = rig.config(0);
  cfg.erase("rails");
  cfg["ipam"] = {{"type", "static"},
                 {"addresses", {{{"address", "10.10.0.7/24"}, {"gateway", "10.10.0.1"}}}}};
  cfg["mtu"] = 9000;
  cfg["mac"] = "02:aa:bb:cc:dd:01";
  auto r = rig.cni("ADD", pod, "rail0", cfg);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto link = json::parse(pod.ip("-j link show dev rail0"))[0];
  CHECK(link["mtu"] == 9000);
  CHECK(link["address"] == "02:aa:bb:cc:dd:01");
  CHECK(json::parse(r.out)["ips"][0]["address"] == "10.10.0.7/24");
  CHECK(rig.cni("CHECK", pod, "rail0", cfg).exit_code == 0);
  pod.ip("addr del 10.10.0.7/24 dev rail0");
  pod.ip("link set rail0 mtu 1500");
  auto c = rig.cni("CHECK", pod, "rail0", cfg);
  CHECK(code_of(c) == 100);
  CHECK_THAT(c.out, Catch::Contains("MTU is 1500, expected 9000"));
  CHECK_THAT(c.out, Catch::Contains("address 10.10.0.7/24 is missing"));
  CHECK(rig.cni("DEL", pod, "rail0", cfg).exit_code == 0);
  auto back = json::parse(rig.node.ip("-j link show dev ryvf0"))[0];
  CHECK(back["mtu"] == 1500);
  CHECK(back["address"] != "02:aa:bb:cc:dd:01");
}

TEST_CASE("DEL is idempotent and best effort", "[cni][netns]") {
  CniRig rig(2);
  const std::string node_before = rig.node_links();
  SECTION("twice") {
    TestNetns pod("pod");
    REQUIRE(rig.cni("ADD", pod, "net1", rig.config(0)).exit_code == 0);
    CHECK(rig.cni("DEL", pod, "net1", rig.config(0)).exit_code == 0);
    CHECK(rig.cni("DEL", pod, "net1", rig.config(0)).exit_code == 0);
    CHECK(rig.node_links() == node_before);
  }
  SECTION("with the pod's namespace gone: the state and the IP are released") {
    auto pod = std::make_unique<TestNetns>("pod");
    REQUIRE(rig.cni("ADD", *pod, "net1", rig.config(0)).exit_code == 0);
    const std::string path = pod->path();
    pod.reset();  // the veth standing in for the VF dies with it (a real VF returns to the host)
    auto r = rig.cni_at("DEL", path, "net1", rig.config(0));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(files_in(rig.state_dir()) == 0);
    CHECK(ipam_allocations(rig) == 0);
  }
  SECTION(
      "with the pod's namespace gone, a host interface that merely has the pod's name is left "
      "alone") {
    rig.node.ip("link add net1 type veth peer name net1peer");
    const std::string before = rig.node.ip("-o link show dev net1");
    auto pod = std::make_unique<TestNetns>("pod");
    REQUIRE(rig.cni("ADD", *pod, "net1", rig.config(0)).exit_code == 0);
    const std::string path = pod->path();
    pod.reset();
    auto r = rig.cni_at("DEL", path, "net1", rig.config(0));
    CHECK(r.exit_code == 0);
    CHECK(rig.node.ip("-o link show dev net1") == before);
  }
  SECTION("with the state lost: the IP is still released") {
    TestNetns pod("pod");
    REQUIRE(rig.cni("ADD", pod, "net1", rig.config(0)).exit_code == 0);
    fs::remove_all(rig.state_dir());
    CHECK(ipam_allocations(rig) == 1);
    CHECK(rig.cni("DEL", pod, "net1", rig.config(0)).exit_code == 0);
    CHECK(ipam_allocations(rig) == 0);
  }
  SECTION("for an attachment that never was") {
    TestNetns pod("pod");
    CHECK(rig.cni("DEL", pod, "net5", rig.config(1)).exit_code == 0);
  }
  SECTION("with an empty or corrupt record: DEL succeeds and keeps the file aside for a person") {
    TestNetns pod("pod");
    fs::create_directories(rig.state_dir());
    for (const std::string text : {"", "{\"containerID\": 5"}) {
      const fs::path rec = fs::path(rig.state_dir()) / "ctr1_net1.json";
      std::ofstream(rec) << text;
      auto r = rig.cni("DEL", pod, "net1", rig.config(0));
      INFO(r.out << r.err);
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.err, Catch::Contains("is corrupt"));
      CHECK_FALSE(fs::exists(rec));
      CHECK(fs::exists(rec.string() + ".corrupt"));
    }
    CHECK(rig.node_links() == node_before);
  }
  SECTION("a record from an earlier boot: its lease released, the device left to this boot") {
    TestNetns pod("pod");
    REQUIRE(rig.cni("ADD", pod, "net1", rig.config(0)).exit_code == 0);
    const fs::path rec = fs::path(rig.state_dir()) / "ctr1_net1.json";
    json j = json::parse(std::ifstream(rec));
    CHECK(j.value("bootID", "").size() == 36);  // the kernel's UUID
    j["bootID"] = "00000000-0000-0000-0000-000000000000";
    std::ofstream(rec) << j.dump();
    const std::string in_pod = pod.ip("-o link show dev net1");
    auto r = rig.cni("DEL", pod, "net1", rig.config(0));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(ipam_allocations(rig) == 0);
    CHECK(files_in(rig.state_dir()) == 0);
    CHECK(pod.ip("-o link show dev net1") == in_pod);  // not this boot's to move
  }
}

TEST_CASE("a stale DEL that waited for the lock leaves the next pod's VF alone", "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod_a("poda"), pod_b("podb");
  REQUIRE(rig.cni("ADD", pod_a, "net1", rig.config(0), "ctrA").exit_code == 0);
  // The runtime's DEL of pod A, sent twice: the second one has read A's record and waits for the
  // device's lock (RAILYARD_CNI_PAUSE holds it there until the FIFO is opened and closed).
  const fs::path fifo = rig.dir.path() / "pause";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  RunResult stale;
  std::thread second([&] {
    stale = rig.cni_at("DEL", pod_a.path(), "net1", rig.config(0), "ctrA", "/usr/lib/cni",
                       {{"RAILYARD_CNI_PAUSE", "del-before-lock:" + fifo.string()}});
  });
  const int release = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // the stale DEL is waiting
  REQUIRE(release >= 0);
  REQUIRE(rig.cni("DEL", pod_a, "net1", rig.config(0), "ctrA").exit_code == 0);
  REQUIRE(rig.cni("ADD", pod_b, "net1", rig.config(0), "ctrB").exit_code == 0);
  const std::string b_before = CniRig::snapshot(pod_b);
  ::close(release);
  second.join();
  INFO(stale.out << stale.err);
  CHECK(stale.exit_code == 0);
  CHECK_THAT(stale.err, Catch::Contains("released meanwhile by another DEL"));
  CHECK(CniRig::snapshot(pod_b) == b_before);
  CHECK(files_in(rig.state_dir()) == 1);  // pod B's record
  CHECK(ipam_allocations(rig) == 1);      // and its lease
  CHECK(rig.cni("DEL", pod_b, "net1", rig.config(0), "ctrB").exit_code == 0);
}

TEST_CASE("an IPAM plugin that hangs: ADD gives up after the policy's limit, all rolled back",
          "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod("pod");
  rig.write_policy({{"ipamTimeoutSeconds", 1}});
  const fs::path bin = rig.dir.path() / "cni-bin";
  fs::create_directories(bin);
  std::ofstream(bin / "hang") << "#!/bin/sh\nexec sleep 600\n";
  fs::permissions(bin / "hang", fs::perms::owner_all);
  json cfg = rig.config(0);
  cfg["rails"]["0"] = {{"type", "hang"}};
  const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = rig.cni("ADD", pod, "net1", cfg, "ctr1", bin.string());
  INFO(r.out << r.err);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  CHECK(code_of(r) == 11);
  CHECK_THAT(r.out, Catch::Contains("IPAM hang ADD did not finish within 1 s and was killed"));
  CHECK(rig.node_links() == node_before);
  CHECK(CniRig::snapshot(pod) == pod_before);
  CHECK(files_in(rig.state_dir()) == 0);
}

TEST_CASE("a failure at each ADD step leaves the node and the pod as they were", "[cni][netns]") {
  SECTION("IPAM fails") {
    CniRig rig(1);
    TestNetns pod("pod");
    const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
    json cfg = rig.config(0);
    cfg["rails"]["0"]["ranges"][0][0]["rangeStart"] = "10.77.0.2";  // outside its subnet
    auto r = rig.cni("ADD", pod, "net1", cfg);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("IPAM host-local ADD"));
    CHECK(rig.node_links() == node_before);
    CHECK(CniRig::snapshot(pod) == pod_before);
    CHECK(files_in(rig.state_dir()) == 0);
  }
  SECTION("the pod name is taken") {
    CniRig rig(1);
    TestNetns pod("pod");
    pod.ip("link add net1 type veth peer name other");
    const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
    auto r = rig.cni("ADD", pod, "net1", rig.config(0));
    CHECK(code_of(r) == 7);
    CHECK_THAT(r.out, Catch::Contains("the pod already has an interface named net1"));
    CHECK(rig.node_links() == node_before);
    CHECK(CniRig::snapshot(pod) == pod_before);
  }
  SECTION("an MTU the device refuses") {
    CniRig rig(1, /*macvlan_vf=*/true);  // a macvlan cannot exceed its parent's 1500
    TestNetns pod("pod");
    const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
    json cfg = rig.config(0);
    cfg["mtu"] = 9000;
    auto r = rig.cni("ADD", pod, "net1", cfg);
    INFO(r.out << r.err);
    CHECK(code_of(r) == 7);
    CHECK_THAT(r.out, Catch::Contains("mtu 9000"));
    CHECK(rig.node_links() == node_before);
    CHECK(CniRig::snapshot(pod) == pod_before);
    CHECK(ipam_allocations(rig) == 0);
  }
  SECTION("VF settings the PF refuses (it reports no VFs over netlink)") {
    CniRig rig(1);
    TestNetns pod("pod");
    const std::string node_before = rig.node_links();
    json cfg = rig.config(0);
    cfg["vlan"] = 100;
    cfg["spoofchk"] = "off";
    auto r = rig.cni("ADD", pod, "net1", cfg);
    CHECK(code_of(r) == 7);
    CHECK_THAT(r.out, Catch::Contains("PF rypf0 reports no VF 0 over netlink"));
    CHECK(rig.node_links() == node_before);
    CHECK(files_in(rig.state_dir()) == 0);
  }
}

TEST_CASE("a fault after every ADD step: the device exactly as it was (ip -d link), both ends",
          "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod("pod");
  // The VF stand-in is up with carrier (its peer is up): the state a rollback must bring back.
  const json vf_before = CniRig::link_detail(rig.node, "ryvf0");
  const json peer_before = CniRig::link_detail(*rig.peers[0], "eth0");
  REQUIRE(vf_before["operstate"] == "UP");
  REQUIRE(std::find(vf_before["flags"].begin(), vf_before["flags"].end(), "LOWER_UP") !=
          vf_before["flags"].end());
  const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
  json cfg = rig.config(0);
  cfg["mtu"] = 1400;  // every step does something
  cfg["mac"] = "02:11:22:33:44:55";
  // (rdma: only in exclusive RDMA netns mode, which the lab's cni test covers.)
  for (const std::string step : {"vf-settings", "move", "rename", "mtu", "mac", "sysctls", "up",
                                 "ipam", "addresses", "sbr", "state"}) {
    INFO("fault after " << step);
    auto r = rig.cni_at("ADD", pod.path(), "net1", cfg, "ctr1", "/usr/lib/cni",
                        {{"RAILYARD_CNI_FAILPOINT", step}});
    INFO(r.out << r.err);
    CHECK(code_of(r) == 999);
    CHECK_THAT(r.out, Catch::Contains("injected fault after " + step));
    // Carrier comes back when the kernel sees both ends up again: wait for it, bounded.
    json vf_after, peer_after;
    for (int i = 0; i < 200; ++i) {
      vf_after = CniRig::link_detail(rig.node, "ryvf0");
      peer_after = CniRig::link_detail(*rig.peers[0], "eth0");
      if (vf_after == vf_before && peer_after == peer_before) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(vf_after.dump(1) == vf_before.dump(1));
    CHECK(peer_after.dump(1) == peer_before.dump(1));
    CHECK(rig.node_links() == node_before);
    CHECK(CniRig::snapshot(pod) == pod_before);
    CHECK(files_in(rig.state_dir()) == 0);
    CHECK(ipam_allocations(rig) == 0);
  }
  // And the same device attaches cleanly afterwards.
  auto r = rig.cni("ADD", pod, "net1", cfg);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(rig.cni("DEL", pod, "net1", cfg).exit_code == 0);
}

TEST_CASE("a config without a name touches nothing: the device keeps its carrier", "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod("pod");
  const json vf_before = CniRig::link_detail(rig.node, "ryvf0");
  const std::string pod_before = CniRig::snapshot(pod);
  json cfg = rig.config(0);
  cfg.erase("name");
  auto r = rig.cni("ADD", pod, "net1", cfg);
  INFO(r.out << r.err);
  CHECK(code_of(r) == 7);
  CHECK_THAT(r.out, Catch::Contains("network configuration has no 'name'"));
  CHECK(CniRig::link_detail(rig.node, "ryvf0") == vf_before);
  CHECK(CniRig::snapshot(pod) == pod_before);
  CHECK(files_in(rig.state_dir()) == 0);
  CHECK(!fs::exists(rig.ipam_dir()));
}

TEST_CASE("killed in the middle of ADD, then DEL: everything is back", "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod("pod");
  const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
  // An IPAM plugin that tells us it is running, then never answers ADD (DEL answers at once).
  const fs::path bin = rig.dir.path() / "bin", fifo = rig.dir.path() / "ipam-running";
  fs::create_directories(bin);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  {
    std::ofstream s(bin / "hang-ipam");
    s << "#!/bin/sh\n[ \"$CNI_COMMAND\" = ADD ] || exit 0\necho running > " << fifo.string()
      << "\nexec sleep 600\n";
  }
  fs::permissions(bin / "hang-ipam", fs::perms::owner_all);
  json cfg = rig.config(0);
  cfg.erase("rails");
  cfg["ipam"] = {{"type", "hang-ipam"}};
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    rig.cni("ADD", pod, "net1", cfg, "ctr1", bin.string());
    ::_exit(0);
  }
  ::setpgid(pid, pid);
  {
    std::ifstream ready(fifo);  // opens when the IPAM plugin has started: the VF is in the pod
    std::string line;
    std::getline(ready, line);
    CHECK(line == "running");
  }
  CHECK_THROWS(rig.node.ip("link show dev ryvf0"));
  ::kill(-pid, SIGKILL);  // railyard-cni, ip netns exec, the IPAM plugin
  int status = 0;
  ::waitpid(pid, &status, 0);
  auto r = rig.cni("DEL", pod, "net1", cfg, "ctr1", bin.string());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(rig.node_links() == node_before);
  CHECK(CniRig::snapshot(pod) == pod_before);
  CHECK(files_in(rig.state_dir()) == 0);
}

TEST_CASE("16 parallel ADD/DEL storms on 2 shared devices: never attached twice, nothing leaked",
          "[cni][netns]") {
  CniRig rig(2);
  const std::string node_before = rig.node_links();
  std::vector<std::unique_ptr<TestNetns>> pods;
  for (int i = 0; i < 16; ++i)
    pods.push_back(std::make_unique<TestNetns>("pod" + std::to_string(i)));
  std::atomic<int> added{0}, refused{0}, bad{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 16; ++i) {
    workers.emplace_back([&, i] {
      for (int round = 0; round < 3; ++round) {
        const int rail = i % 2;
        const std::string ctr = "storm" + std::to_string(i) + "-" + std::to_string(round);
        auto r = rig.cni("ADD", *pods[i], "net1", rig.config(rail), ctr);
        if (r.exit_code == 0) {
          ++added;
          if (rig.cni("DEL", *pods[i], "net1", rig.config(rail), ctr).exit_code != 0) ++bad;
        } else if (code_of(r) == 7 &&
                   (r.out.find("is attached to container") != std::string::npos ||
                    r.out.find("is not in the host network namespace") != std::string::npos)) {
          ++refused;
        } else {
          ++bad;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  CHECK(bad == 0);
  CHECK(added + refused == 48);
  CHECK(added >= 2);
  CHECK(rig.node_links() == node_before);
  for (const auto& p : pods)
    CHECK(p->ip("-o link show") ==
          "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group "
          "default qlen 1000\\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n");
  CHECK(files_in(rig.state_dir()) == 0);
  CHECK(ipam_allocations(rig) == 0);
}

TEST_CASE("bad input: the right code and message, nothing touched", "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod("pod");
  pod.ip("link add net9 type veth peer name net9p");
  const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
  auto expect = [&](const RunResult& r, int code, const std::string& part) {
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(code_of(r) == code);
    CHECK_THAT(r.out, Catch::Contains(part));
  };
  auto run_raw = [&](std::map<std::string, std::string> env, const std::string& in) {
    std::map<std::string, std::string> base = {
        {"CNI_COMMAND", "ADD"},
        {"CNI_CONTAINERID", "ctr1"},
        {"CNI_NETNS", pod.path()},
        {"CNI_IFNAME", "net1"},
        {"CNI_PATH", "/usr/lib/cni"},
        {"RAILYARD_SYSFS_ROOT", (rig.dir.path() / "root").string()},
        {"RAILYARD_RAILS_FILE", (rig.dir.path() / "rails.json").string()},
        {"RAILYARD_CNI_POLICY", rig.policy_file()}};
    for (auto& [k, v] : env) {
      if (v == "<unset>")
        base.erase(k);
      else
        base[k] = v;
    }
    std::vector<std::string> argv = {"ip", "netns", "exec", rig.node.name(), "env", "-i"};
    for (auto& [k, v] : base) argv.push_back(k + "=" + v);
    argv.push_back(RAILYARD_BIN_DIR "/railyard-cni");
    return run(argv, {}, in);
  };
  const json good = rig.config(0);
  auto with = [&](const std::string& key, const json& v) {
    json c = good;
    c[key] = v;
    return c.dump();
  };
  expect(run_raw({}, "{\"cniVersion\": "), 6, "not valid JSON");
  expect(run_raw({}, with("mtu", "9000")), 7, "'mtu' must be an integer");
  expect(run_raw({}, with("vlan", 5000)), 7, "'vlan' must be an integer from 0 to 4094");
  expect(run_raw({}, with("deviceID", "../../x")), 7, "deviceID '../../x' is not a PCI address");
  expect(run_raw({}, with("deviceID", "0000:ee:00.0")), 7, "no such PCI device");
  expect(run_raw({}, with("mac", "not-a-mac")), 7, "is not a MAC address");
  expect(run_raw({{"CNI_IFNAME", "a-very-long-ifname"}}, good.dump()), 4,
         "not a valid interface name");
  expect(run_raw({{"CNI_IFNAME", "net/1"}}, good.dump()), 4, "not a valid interface name");
  expect(run_raw({{"CNI_CONTAINERID", "<unset>"}}, good.dump()), 4, "CNI_CONTAINERID is not set");
  expect(run_raw({{"CNI_NETNS", "/etc/hostname"}}, good.dump()), 4, "is not a network namespace");
  expect(run_raw({{"CNI_NETNS", "/var/run/netns/ry-none"}}, good.dump()), 3, "does not exist");
  expect(run_raw({}, with("cniVersion", "0.1.0")), 1, "cniVersion '0.1.0' is not supported");
  expect(run_raw({{"CNI_IFNAME", "net9"}}, good.dump()), 7,
         "the pod already has an interface named net9");
  json no_device = good;
  no_device.erase("deviceID");
  // The likely cause named: a pod that did not request the NAD's resource gets no deviceID.
  expect(run_raw({}, no_device.dump()), 7,
         "no device for network '" + good.value("name", "") +
             "': Multus passes a deviceID only when the pod requests the NAD's resource");
  json no_ipam_plugin = good;
  no_ipam_plugin["rails"]["0"]["type"] = "no-such-ipam";
  expect(run_raw({}, no_ipam_plugin.dump()), 7, "IPAM plugin 'no-such-ipam' not found in CNI_PATH");
  CHECK(rig.node_links() == node_before);
  CHECK(CniRig::snapshot(pod) == pod_before);
  CHECK(files_in(rig.state_dir()) == 0);
}

TEST_CASE("a NAD cannot reach past the node policy: log file, directories, host interfaces",
          "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod("pod");
  // The node's management NIC, which no NAD may hand to a pod.
  rig.node.ip("link add mgmt0 type veth peer name mgmt0p");
  const std::string node_before = rig.node_links(), pod_before = CniRig::snapshot(pod);
  auto refused = [&](const json& cfg, const std::string& part) {
    const auto r = rig.cni("ADD", pod, "net1", cfg);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(code_of(r) == 7);
    CHECK_THAT(r.out, Catch::Contains(part));
  };
  const fs::path elsewhere = rig.dir.path() / "elsewhere";
  json cfg = rig.config(0);
  cfg["logFile"] = (elsewhere / "sub" / "authorized_keys").string();
  refused(cfg, "is not a file inside the node's log directory");
  cfg["logFile"] = rig.log_dir() + "/../elsewhere/x.log";
  refused(cfg, "holds '..'");
  fs::create_directories(rig.log_dir());
  fs::create_directory_symlink(elsewhere, fs::path(rig.log_dir()) / "link");
  cfg["logFile"] = rig.log_dir() + "/link/x.log";
  refused(cfg, "passes through a symbolic link");
  CHECK_FALSE(fs::exists(elsewhere));  // nothing created outside the log directory

  cfg = rig.config(0);
  cfg["stateDir"] = (elsewhere / "state").string();
  refused(cfg, "'stateDir' '" + (elsewhere / "state").string() + "' is not the node's");
  cfg = rig.config(0);
  cfg.erase("deviceID");
  cfg["deviceFrom"] = "dra";
  cfg["draDir"] = (elsewhere / "dra").string();
  refused(cfg, "'draDir'");
  cfg = rig.config(0);
  cfg.erase("deviceID");
  cfg["device"] = "mgmt0";
  refused(cfg, "(mgmt0) is not a rail NIC of this node nor a VF of one");
  CHECK_FALSE(fs::exists(elsewhere));

  // A newline in a NAD's value never starts a log line of its own, in the log file the policy
  // allows.
  cfg = rig.config(0);
  cfg["logFile"] = rig.log_dir() + "/railyard-cni.log";
  cfg["mac"] = "zz\nssh-ed25519 AAAA attacker";
  refused(cfg, "is not a MAC address");
  std::ifstream log(rig.log_dir() + "/railyard-cni.log");
  std::string line;
  int lines = 0;
  while (std::getline(log, line)) {
    ++lines;
    INFO(line);
    CHECK(line.rfind("20", 0) == 0);  // every line starts with its time stamp
    CHECK(line.find("zz\\nssh-ed25519") != std::string::npos);
  }
  CHECK(lines == 1);

  CHECK(rig.node_links() == node_before);
  CHECK(CniRig::snapshot(pod) == pod_before);
  CHECK(files_in(rig.state_dir()) == 0);
}

TEST_CASE("the node policy file: read as the node wrote it, a bad one refuses every command",
          "[cni][netns]") {
  CniRig rig(1);
  TestNetns pod("pod");
  rig.write_policy({{"netdevs", {"eth0/x"}}});
  auto r = rig.cni("ADD", pod, "net1", rig.config(0));
  CHECK(code_of(r) == 7);
  CHECK_THAT(r.out, Catch::Contains("'netdevs' holds something that is not an interface name"));
  rig.write_policy({{"stateDir", "relative"}});
  r = rig.cni("DEL", pod, "net1", rig.config(0));
  CHECK(code_of(r) == 7);
  CHECK_THAT(r.out, Catch::Contains("'stateDir' must be an absolute directory path"));
  std::ofstream(rig.policy_file()) << "{\"stateDir\": ";
  r = rig.cni("ADD", pod, "net1", rig.config(0));
  CHECK_THAT(r.out, Catch::Contains("is not valid JSON"));
  // A named policy that is not there is an error, not the defaults.
  fs::remove(rig.policy_file());
  r = rig.cni("ADD", pod, "net1", rig.config(0));
  CHECK_THAT(r.out, Catch::Contains("(RAILYARD_CNI_POLICY) cannot be read"));
  CHECK(files_in(rig.state_dir()) == 0);
}

TEST_CASE("deviceFrom dra: the pod's claimed NICs, rail by rail, and their networkData",
          "[cni][netns]") {
  CniRig rig(2);
  TestNetns pod("pod");
  const std::string node_before = rig.node_links();
  const fs::path dra = rig.dra_dir();
  // As railyard-dra-driver leaves them at NodePrepareResources; rail 1 listed first.
  railyard::dra::write_pod_claim(dra, "pod-uid-1", "claim-uid-1",
                                 {{"claim-uid-1", "ml/rails", "vf-b", rig.vf_pci[1], 1},
                                  {"claim-uid-1", "ml/rails", "vf-a", rig.vf_pci[0], 0}});
  json cfg = rig.config(0, "1.1.0");  // 1.1 results name the PCI device (pciID)
  cfg.erase("deviceID");
  cfg["deviceFrom"] = "dra";
  const std::map<std::string, std::string> args = {
      {"CNI_ARGS",
       "IgnoreUnknown=1;K8S_POD_NAMESPACE=ml;K8S_POD_NAME=train-0;K8S_POD_UID=pod-uid-1"}};
  auto add = [&](const std::string& ifname, const std::map<std::string, std::string>& env) {
    return rig.cni_at("ADD", pod.path(), ifname, cfg, "ctr1", "/usr/lib/cni", env);
  };
  auto r1 = add("net1", args);
  INFO(r1.out << r1.err);
  REQUIRE(r1.exit_code == 0);
  CHECK(json::parse(r1.out)["interfaces"][0]["pciID"] == rig.vf_pci[0]);
  auto r2 = add("net2", args);
  REQUIRE(r2.exit_code == 0);
  CHECK(json::parse(r2.out)["interfaces"][0]["pciID"] == rig.vf_pci[1]);
  // Rail 1's IPAM from the rails map: the NIC decides, not the attachment's order.
  CHECK_THAT(json::parse(r2.out)["ips"][0]["address"].get<std::string>(),
             Catch::StartsWith("10.10.1."));
  auto r3 = add("net3", args);
  CHECK(r3.exit_code == 1);
  CHECK_THAT(r3.out, Catch::Contains("every railyard.io NIC of pod pod-uid-1 (2) is attached"));
  auto nd = railyard::dra::read_network_data(dra, rig.vf_pci[0]);
  REQUIRE(nd);
  CHECK(nd->pod_uid == "pod-uid-1");
  CHECK(nd->interface_name == "net1");
  CHECK(nd->ips ==
        std::vector<std::string>{json::parse(r1.out)["ips"][0]["address"].get<std::string>()});
  CHECK(nd->hardware_address == json::parse(r1.out)["interfaces"][0]["mac"]);

  auto no_uid = add("net4", {{"CNI_ARGS", "K8S_POD_NAME=train-0"}});
  CHECK(no_uid.exit_code == 1);
  CHECK_THAT(no_uid.out, Catch::Contains("needs the pod's UID in CNI_ARGS (K8S_POD_UID)"));
  auto other = add("net4", {{"CNI_ARGS", "K8S_POD_UID=pod-uid-2"}});
  CHECK_THAT(other.out, Catch::Contains("pod pod-uid-2 has no railyard.io NIC prepared"));

  for (const char* ifname : {"net1", "net2", "net1"})
    CHECK(rig.cni_at("DEL", pod.path(), ifname, cfg, "ctr1", "/usr/lib/cni", args).exit_code == 0);
  CHECK_FALSE(railyard::dra::read_network_data(dra, rig.vf_pci[0]));
  CHECK_FALSE(railyard::dra::read_network_data(dra, rig.vf_pci[1]));
  CHECK(rig.node_links() == node_before);
  CHECK(files_in(rig.state_dir()) == 0);

  json both = cfg;
  both["deviceID"] = rig.vf_pci[0];
  auto bad = rig.cni_at("ADD", pod.path(), "net1", both, "ctr1", "/usr/lib/cni", args);
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.out, Catch::Contains("leave out deviceID and device"));
}

TEST_CASE("STATUS and GC (CNI 1.1)", "[cni][netns]") {
  CniRig rig(2);
  TestNetns pod("pod");
  json cfg = rig.config(0, "1.1.0");
  CHECK(rig.cni("STATUS", pod, "net1", cfg).exit_code == 0);
  json missing = cfg;
  missing["rails"]["1"]["type"] = "no-such-ipam";
  CHECK(code_of(rig.cni("STATUS", pod, "net1", missing)) == 50);

  REQUIRE(rig.cni("ADD", pod, "net1", rig.config(0, "1.1.0"), "keep").exit_code == 0);
  REQUIRE(rig.cni("ADD", pod, "net2", rig.config(1, "1.1.0"), "stale").exit_code == 0);
  json gc = cfg;
  gc.erase("deviceID");
  gc["device"] = "unused";
  gc["cni.dev/valid-attachments"] = {{{"containerID", "keep"}, {"ifname", "net1"}}};
  auto r = rig.cni("GC", pod, "", gc);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_NOTHROW(pod.ip("link show dev net1"));
  CHECK_THROWS(pod.ip("link show dev net2"));
  CHECK_NOTHROW(rig.node.ip("link show dev ryvf1"));
  CHECK(ipam_allocations(rig) == 1);
  CHECK(rig.cni("DEL", pod, "net1", rig.config(0, "1.1.0"), "keep").exit_code == 0);
}

TEST_CASE("RDMA netns mode is reported as the kernel has it", "[cni]") {
  // Without RDMA netlink (no ib_core, as on the CI machines) the plugin must see "unavailable"
  // and leave RDMA devices alone; with it, the kernel always reports shared or exclusive.
  const int fd = ::socket(AF_NETLINK, SOCK_RAW, 20 /* NETLINK_RDMA */);
  const bool kernel_has_rdma_netlink = fd >= 0;
  if (fd >= 0) ::close(fd);
  const auto mode = railyard::cni::rdma_netns_mode();
  INFO("mode: " << railyard::cni::to_string(mode));
  if (kernel_has_rdma_netlink)
    CHECK(mode != railyard::cni::RdmaNetnsMode::kUnavailable);
  else
    CHECK(mode == railyard::cni::RdmaNetnsMode::kUnavailable);
  if (!kernel_has_rdma_netlink)
    CHECK_THROWS_WITH(railyard::cni::move_rdma_device("mlx5_0", 0),
                      "cannot move RDMA device mlx5_0: no RDMA netlink");
}
