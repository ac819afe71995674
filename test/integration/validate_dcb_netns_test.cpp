// roce-qos asks the kernel for DCB over rtnetlink: on a veth (a driver with no DCB operations,
// like the lab VMs' e1000e) the kernel answers EOPNOTSUPP, and the check says unknown.
#include <catch2/catch.hpp>

#include "nccl-tests-wrapper/checks/dcb.h"
#include "nccl-tests-wrapper/checks/roce_qos.h"
#include "net/netns.h"
#include "test/support/netns.h"

using namespace railyard;
using namespace railyard::testing;

TEST_CASE("DCB on a netdev without DCB operations: the kernel's EOPNOTSUPP, unknown",
          "[validate][dcb][netns]") {
  TestNetns a("dcb-a"), b("dcb-b");
  veth(a, "rail0", b, "peer0");
  const auto state = net::in_netns(a.path(), [] { return validate::query_dcb("rail0"); });
  CHECK_FALSE(state.answered);
  CHECK(state.why == "the driver implements no DCB operations (EOPNOTSUPP)");
  const auto f = validate::judge_roce_qos("rail 0 (x)", "rail0", "veth", state, {}, 3, true);
  CHECK(f.unknown());
  CHECK_FALSE(f.fails());
  const auto missing = net::in_netns(a.path(), [] { return validate::query_dcb("peer0"); });
  CHECK(missing.why == "no netdev peer0 in this network namespace");
}
