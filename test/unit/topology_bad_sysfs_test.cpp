// Broken sysfs: every problem is reported with the path, the broken device is left out, and the
// model says it is incomplete. Nothing crashes and nothing wrong is presented as right.
#include <catch2/catch.hpp>
#include <fstream>

#include "test/support/fixture_node.h"

using namespace railyard::topology;
using railyard::testing::GeneratedFixture;
namespace fs = std::filesystem;

namespace {

const std::string kNic0 = "devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0";

void overwrite(const fs::path& p, const std::string& value) {
  std::ofstream out(p, std::ios::trunc);
  out << value << "\n";
}

// The one diagnostic about `path` (shown as /sys/...), or a failed check.
Diagnostic only_about(const Node& node, const std::string& path) {
  std::vector<Diagnostic> found;
  for (const auto& d : node.diagnostics.all()) {
    UNSCOPED_INFO(d.to_string());
    if (d.path == path) found.push_back(d);
  }
  REQUIRE(found.size() == 1);
  return found.front();
}

bool has_nic(const Node& node, const std::string& rdma) {
  for (const auto& n : node.nics)
    if (n.pf.rdma_name() == rdma) return true;
  return false;
}

}  // namespace

TEST_CASE("a missing identity file leaves that device out, with an error naming it",
          "[topology][bad-sysfs]") {
  GeneratedFixture fx("dgx-h100");
  fs::remove(fx.sys(kNic0 + "/vendor"));
  Node node = discover_devices(fx.sysfs());
  auto d = only_about(node, "/sys/" + kNic0 + "/vendor");
  CHECK(d.level == Diagnostic::Level::kError);
  CHECK(d.message == "missing");
  CHECK(node.diagnostics.has_errors());
  CHECK_FALSE(has_nic(node, "mlx5_0"));
  CHECK(node.nics.size() == 11);
}

TEST_CASE("an unreadable file is an error naming it", "[topology][bad-sysfs]") {
  GeneratedFixture fx("dgx-h100");
  fs::remove(fx.sys(kNic0 + "/class"));
  fs::create_directory(fx.sys(kNic0 + "/class"));  // read() fails with EISDIR, even for root
  Node node = discover_devices(fx.sysfs());
  auto d = only_about(node, "/sys/" + kNic0 + "/class");
  CHECK(d.level == Diagnostic::Level::kError);
  CHECK(d.message == "unreadable: Is a directory");
  CHECK_FALSE(has_nic(node, "mlx5_0"));
}

TEST_CASE("garbage values are errors naming the file and the value", "[topology][bad-sysfs]") {
  GeneratedFixture fx("dgx-h100");
  SECTION("class") {
    overwrite(fx.sys(kNic0 + "/class"), "network");
    Node node = discover_devices(fx.sysfs());
    CHECK(only_about(node, "/sys/" + kNic0 + "/class").message == "garbage value 'network'");
    CHECK_FALSE(has_nic(node, "mlx5_0"));
  }
  SECTION("numa_node") {
    overwrite(fx.sys(kNic0 + "/numa_node"), "zero");
    Node node = discover_devices(fx.sysfs());
    auto d = only_about(node, "/sys/" + kNic0 + "/numa_node");
    CHECK(d.level == Diagnostic::Level::kError);
    CHECK(d.message == "garbage value 'zero'");
  }
  SECTION("port state") {
    overwrite(fx.sys(kNic0 + "/infiniband/mlx5_0/ports/1/state"), "ACTIVE");
    Node node = discover_devices(fx.sysfs());
    auto d = only_about(node, "/sys/" + kNic0 + "/infiniband/mlx5_0/ports/1/state");
    CHECK(d.level == Diagnostic::Level::kError);
    CHECK(d.message == "garbage value 'ACTIVE'");
    CHECK(node.nics[0].port() == nullptr);  // no port rather than a guessed one
  }
  SECTION("sriov_numvfs") {
    overwrite(fx.sys(kNic0 + "/sriov_numvfs"), "-4");
    Node node = discover_devices(fx.sysfs());
    CHECK(only_about(node, "/sys/" + kNic0 + "/sriov_numvfs").message == "garbage value '-4'");
  }
  SECTION("link width: a warning, the width left unknown") {
    overwrite(fx.sys(kNic0 + "/current_link_width"), "sixteen");
    Node node = discover_devices(fx.sysfs());
    auto d = only_about(node, "/sys/" + kNic0 + "/current_link_width");
    CHECK(d.level == Diagnostic::Level::kWarning);
    CHECK_FALSE(node.nics[0].pf.pci.link.current_width);
    CHECK_FALSE(node.nics[0].pf.pci.link.degraded());
    CHECK_FALSE(node.diagnostics.has_errors());
  }
}

TEST_CASE("dangling symlinks are errors naming the link", "[topology][bad-sysfs]") {
  GeneratedFixture fx("dgx-h100");
  fs::create_directory_symlink("../../../devices/pci0000:e0/0000:e0:01.0/0000:e1:00.0",
                               fx.sys("bus/pci/devices/0000:e1:00.0"));
  Node node = discover_devices(fx.sysfs());
  CHECK(only_about(node, "/sys/bus/pci/devices/0000:e1:00.0").message == "dangling symlink");
  CHECK(node.nics.size() == 12);  // the rest is read
}

TEST_CASE("a VF whose PF is gone is reported, not adopted", "[topology][bad-sysfs]") {
  GeneratedFixture fx("dgx-h100");
  // Remove the PF's directory; its VFs (siblings) remain with dangling physfn links.
  fs::remove_all(fx.sys(kNic0));
  Node node = discover_devices(fx.sysfs());
  const std::string parent = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/";
  auto d = only_about(node, parent + "0000:19:00.2/physfn");
  CHECK(d.message == "dangling symlink: the VF's PF is gone");
  CHECK(only_about(node, "/sys/bus/pci/devices/0000:19:00.0").message == "dangling symlink");
  CHECK_FALSE(node.find_function(*PciAddress::parse("0000:19:00.2")));
}

TEST_CASE("a PF whose VF is gone reports the dangling virtfn link", "[topology][bad-sysfs]") {
  GeneratedFixture fx("dgx-h100");
  const std::string vf = "devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.3";
  fs::remove_all(fx.sys(vf));
  fs::remove(fx.sys("bus/pci/devices/0000:19:00.3"));
  Node node = discover_devices(fx.sysfs());
  CHECK(only_about(node, "/sys/" + kNic0 + "/virtfn1").message ==
        "dangling symlink: the VF is gone");
  CHECK(node.nics[0].vfs.size() == 3);
}

TEST_CASE("a root without sysfs is an empty node with a warning", "[topology][bad-sysfs]") {
  railyard::testing::TempDir empty;
  Node node = discover_devices(Sysfs(empty.path()));
  CHECK(node.gpus.empty());
  CHECK(node.nics.empty());
  CHECK_FALSE(node.diagnostics.has_errors());
  CHECK(only_about(node, "/sys/bus/pci/devices").message == "no PCI bus in sysfs");
}
