// Attribute parsers: every format the kernel has written, and garbage.
#include <catch2/catch.hpp>

#include "topology/model/path.h"
#include "topology/sysfs/parse.h"
#include "topology/sysfs/pci.h"
#include "topology/sysfs/pci_address.h"
#include "topology/sysfs/rdma.h"

using namespace railyard::topology;

TEST_CASE("PCI addresses parse strictly", "[topology][pci]") {
  auto a = PciAddress::parse("0000:1a:00.1");
  REQUIRE(a);
  CHECK(a->domain == 0);
  CHECK(a->bus == 0x1a);
  CHECK(a->device == 0);
  CHECK(a->function == 1);
  CHECK(a->to_string() == "0000:1a:00.1");
  CHECK(PciAddress::parse("0000:1A:1F.7")->to_string() == "0000:1a:1f.7");
  CHECK(PciAddress::parse("10000:e1:00.0")->to_string() == "10000:e1:00.0");  // VMD domain
  for (const char* bad :
       {"", "1a:00.0", "0000:1a:00", "0000:1a:20.0", "0000:1a:00.8", "../../x", "0000:1a:00.0/..",
        "0000:1a:00.0 ", "zzzz:1a:00.0", "0000:1a:0.0", "123456789:00:00.0"})
    CHECK_FALSE(PciAddress::parse(bad));
  CHECK(*PciAddress::parse("0000:1a:00.0") < *PciAddress::parse("0000:1a:00.1"));
  CHECK(*PciAddress::parse("0000:ff:00.0") < *PciAddress::parse("0001:00:00.0"));
}

TEST_CASE("link speeds in old and new kernel formats", "[topology][pci]") {
  CHECK(parse_link_speed("8 GT/s") == 8.0);
  CHECK(parse_link_speed("2.5 GT/s") == 2.5);
  CHECK(parse_link_speed("16.0 GT/s PCIe") == 16.0);
  CHECK(parse_link_speed("32.0 GT/s PCIe") == 32.0);
  CHECK_FALSE(parse_link_speed("Unknown"));
  CHECK_FALSE(parse_link_speed("Unknown speed"));
  CHECK_FALSE(parse_link_speed("fast"));
  CHECK_FALSE(parse_link_speed("16.0 Gb/s"));
}

TEST_CASE("PCIe link degradation and its display", "[topology][pci]") {
  PciLink full{32.0, 16, 32.0, 16};
  CHECK_FALSE(full.degraded());
  CHECK(full.to_string() == "x16 32.0 GT/s");
  PciLink narrow{32.0, 8, 32.0, 16};
  CHECK(narrow.degraded());
  CHECK(narrow.to_string() == "x8/x16 32.0 GT/s");
  PciLink slow{16.0, 16, 32.0, 16};
  CHECK(slow.degraded());
  CHECK(slow.to_string() == "x16 16.0/32.0 GT/s");
  CHECK(PciLink{}.to_string() == "-");
}

TEST_CASE("RDMA rates", "[topology][rdma]") {
  CHECK(parse_rate_gbps("400 Gb/sec (4X NDR)") == 400.0);
  CHECK(parse_rate_gbps("56 Gb/sec (4X FDR)") == 56.0);
  CHECK(parse_rate_gbps("2.5 Gb/sec (1X SDR)") == 2.5);
  CHECK_FALSE(parse_rate_gbps("fast"));
  CHECK_FALSE(parse_rate_gbps("400"));
}

TEST_CASE("numbers and hex IDs", "[topology][parse]") {
  CHECK(parse_int("-1") == -1);
  CHECK(parse_int("42") == 42);
  CHECK_FALSE(parse_int("4 2"));
  CHECK_FALSE(parse_int(""));
  CHECK(parse_hex("0x10de") == 0x10deu);
  CHECK(parse_hex("15b3") == 0x15b3u);
  CHECK(parse_hex("0x030200") == 0x030200u);
  CHECK_FALSE(parse_hex("0x"));
  CHECK_FALSE(parse_hex("0xg0"));
}

TEST_CASE("path class names round-trip and NCCL folds NODE into PHB", "[topology][path]") {
  for (auto c : {PathClass::kX, PathClass::kPIX, PathClass::kPXB, PathClass::kPHB, PathClass::kNODE,
                 PathClass::kSYS})
    CHECK(parse_path_class(to_string(c)) == c);
  CHECK_FALSE(parse_path_class("NV4"));
  CHECK(nccl_view(PathClass::kNODE) == PathClass::kPHB);
  CHECK(nccl_view(PathClass::kPXB) == PathClass::kPXB);
}
