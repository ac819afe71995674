// Bundles on hand-built trees: the cases where a greedy choice goes wrong.
#include <catch2/catch.hpp>

#include "topology/bundles/assignment.h"
#include "topology/bundles/bundles.h"

using namespace railyard::topology;

namespace {

// A function under host bridge `hb` below `bridges` (root port first).
PciDevice dev(const char* addr, const char* hb, std::vector<const char*> bridges, int numa = 0) {
  PciDevice d;
  d.address = *PciAddress::parse(addr);
  d.host_bridge = hb;
  for (const char* b : bridges) d.bridges.push_back(*PciAddress::parse(b));
  d.numa_node = numa;
  return d;
}

Nic nic(PciDevice pci) {
  Nic n;
  n.pf.pci = std::move(pci);
  return n;
}

std::string summary(const std::vector<Bundle>& bundles) {
  std::string s;
  for (const auto& b : bundles)
    s += (s.empty() ? "" : " ") + std::to_string(b.gpu) + ":" + std::to_string(b.rail) + ":" +
         std::string(to_string(b.path));
  return s;
}

}  // namespace

TEST_CASE("fewest worst paths first, then the shortest others", "[topology][bundles]") {
  // GPU0 and NIC0 share a switch; GPU1 sits one switch deeper below the same top switch.
  std::vector<Gpu> gpus = {
      {0, dev("0000:03:00.0", "pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"})},
      {1, dev("0000:06:00.0", "pci0000:00",
              {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0", "0000:05:00.0"})}};
  std::vector<Nic> nics = {
      nic(dev("0000:07:00.0", "pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:02.0"})),
      nic(dev("0000:81:00.0", "pci0000:80", {"0000:80:01.0"}, 1))};
  REQUIRE(path_class(gpus[0].pci, nics[0].pf.pci) == PathClass::kPIX);
  REQUIRE(path_class(gpus[1].pci, nics[0].pf.pci) == PathClass::kPXB);
  // NIC1 is on the other socket: one GPU must take a SYS path either way; the other then gets
  // the best that is left (PIX for GPU0 rather than PXB for GPU1).
  CHECK(summary(compute_bundles(gpus, nics, {0, 1})) == "0:0:PIX 1:1:SYS");
  // NIC1 in the same switch as GPU1: both get their own switch-local NIC, whatever the rail order.
  nics[1].pf.pci =
      dev("0000:08:00.0", "pci0000:00",
          {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0", "0000:05:01.0"});
  CHECK(summary(compute_bundles(gpus, nics, {1, 0})) == "0:1:PIX 1:0:PIX");
}

TEST_CASE("more GPUs than rails: rails are shared evenly, closest first", "[topology][bundles]") {
  std::vector<Gpu> gpus;
  const char* gpu_addrs[] = {"0000:04:00.0", "0000:05:00.0", "0000:84:00.0", "0000:85:00.0"};
  for (int i = 0; i < 4; ++i) {
    const bool second = i >= 2;
    gpus.push_back(
        {i, dev(gpu_addrs[i], second ? "pci0000:80" : "pci0000:00",
                {second ? "0000:80:01.0" : "0000:00:01.0", second ? "0000:81:00.0" : "0000:01:00.0",
                 second ? (i == 2 ? "0000:82:00.0" : "0000:82:01.0")
                        : (i == 0 ? "0000:02:00.0" : "0000:02:01.0")},
                second ? 1 : 0)});
  }
  std::vector<Nic> nics = {
      nic(dev("0000:06:00.0", "pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:02.0"})),
      nic(dev("0000:86:00.0", "pci0000:80", {"0000:80:01.0", "0000:81:00.0", "0000:82:02.0"}, 1))};
  CHECK(summary(compute_bundles(gpus, nics, {0, 1})) == "0:0:PIX 1:0:PIX 2:1:PIX 3:1:PIX");
  // Three GPUs on one switch, two rails there: every rail is used before one is shared.
  std::vector<Gpu> three(gpus.begin(), gpus.begin() + 2);
  three.push_back(
      {2, dev("0000:07:00.0", "pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:03.0"})});
  std::vector<Nic> two = {nics[0], nic(dev("0000:08:00.0", "pci0000:00",
                                           {"0000:00:01.0", "0000:01:00.0", "0000:02:04.0"}))};
  CHECK(summary(compute_bundles(three, two, {0, 1})) == "0:0:PIX 1:1:PIX 2:1:PIX");
}

TEST_CASE("no GPUs or no rails: no bundles", "[topology][bundles]") {
  std::vector<Nic> nics = {nic(dev("0000:06:00.0", "pci0000:00", {"0000:00:01.0"}))};
  CHECK(compute_bundles({}, nics, {0}).empty());
  std::vector<Gpu> gpus = {{0, dev("0000:05:00.0", "pci0000:00", {"0000:00:02.0"})}};
  CHECK(compute_bundles(gpus, nics, {}).empty());
}

TEST_CASE("min-cost assignment is exact on small matrices", "[topology][assignment]") {
  CHECK(min_cost_assignment({{4, 1, 3}, {2, 0, 5}, {3, 2, 2}}) == std::vector<int>{1, 0, 2});
  // Greedy row by row would take column 0 for row 0 and pay 100 for row 1.
  CHECK(min_cost_assignment({{1, 2}, {1, 100}}) == std::vector<int>{1, 0});
  CHECK(min_cost_assignment({{1, 2, 3, 4}, {1, 5, 3, 4}}) == std::vector<int>{1, 0});
  CHECK(min_cost_assignment({}).empty());
  CHECK_THROWS(min_cost_assignment({{1}, {2}}));
}
