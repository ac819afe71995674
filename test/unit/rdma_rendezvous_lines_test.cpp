// The rendezvous's text lines, as a peer may shape them: every field checked, the sender named.
#include <catch2/catch.hpp>

#include "rdma/run/rendezvous_lines.h"

using namespace railyard::rdma;

TEST_CASE("rendezvous lines: a join line round-trips", "[rdma][rendezvous]") {
  const std::vector<Endpoint> eps{{"10.0.0.1", 4000}, {"10.0.1.1", 4001}};
  const JoinLine l = decode_join(encode_join(2, 4, eps), 4, 2, "rank 2");
  CHECK(l.rank == 2);
  REQUIRE(l.eps.size() == 2);
  CHECK(l.eps[1].host == "10.0.1.1");
  CHECK(l.eps[1].port == 4001);
}

TEST_CASE("rendezvous lines: a bad join line names what is wrong", "[rdma][rendezvous]") {
  auto refused = [](const std::string& line) {
    try {
      decode_join(line, 4, 2, "a peer");
    } catch (const NetError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("") == "a peer sent no rank and world size");
  CHECK(refused("1 5 a:1 b:2") == "a peer says the world size is 5, not 4");
  CHECK(refused("4 4 a:1 b:2") == "a peer claims rank 4, out of range");
  CHECK(refused("-1 4 a:1 b:2") == "a peer claims rank -1, out of range");
  CHECK(refused("1 4 a:1 b:2 c:3") == "a peer has more than 2 rails");
  CHECK(refused("1 4 a:1") == "rank 1 has 1 rails, this rank has 2");
  CHECK(refused("1 4 a:1 b:99999999999").find("b:99999999999") != std::string::npos);
}

TEST_CASE("rendezvous lines: rank 0's table has every rank once", "[rdma][rendezvous]") {
  const std::string good = "0 3 a:1\n1 3 b:2\n2 3 c:3\n";
  const Table t = decode_table(good, 3, 1, "rank 0");
  REQUIRE(t.size() == 3);
  CHECK(t[2][0].host == "c");
  CHECK_THROWS_WITH(decode_table("0 3 a:1\n1 3 b:2\n1 3 c:3\n", 3, 1, "rank 0"),
                    "rank 0 sent rank 1 twice");
  CHECK_THROWS_WITH(decode_table("0 3 a:1\n2 3 c:3\n", 3, 1, "rank 0"),
                    "rank 0 sent a table without rank 1");
}
