// The ring's arithmetic (rdma/ring/schedule.h), checked by simulating it: every rank's steps, run
// on plain vectors, must leave the full sum everywhere, for sizes that divide by nothing.
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "rdma/ring/schedule.h"

using namespace railyard::rdma;

TEST_CASE("rail slices and ring chunks cover every element exactly once", "[rdma][schedule]") {
  for (size_t count : {0u, 1u, 2u, 7u, 1000u, 1001u, 65537u}) {
    for (size_t rails : {1u, 2u, 3u, 8u}) {
      size_t next = 0;
      for (size_t k = 0; k < rails; ++k) {
        const Span s = rail_slice(count, rails, k);
        CHECK(s.begin == next);
        next = s.end();
        for (int world : {1, 2, 3, 4, 7}) {
          size_t at = 0;
          for (int c = 0; c < world; ++c) {
            const Span ch = ring_chunk(s.len, world, c);
            CHECK(ch.begin == at);
            CHECK(ch.len <= s.len / static_cast<size_t>(world) + 1);
            at = ch.end();
          }
          CHECK(at == s.len);
        }
      }
      CHECK(next == count);
    }
  }
  CHECK_THROWS(rail_slice(10, 2, 2));
  CHECK_THROWS(ring_chunk(10, 3, 3));
}

TEST_CASE("ring steps, run by every rank at once, leave the sum everywhere", "[rdma][schedule]") {
  for (int world : {2, 3, 4, 5}) {
    for (size_t len : {1u, 5u, 17u, 100u}) {
      // rank r holds r+1 at every element; the sum is world(world+1)/2
      std::vector<std::vector<long>> buf(static_cast<size_t>(world));
      for (int r = 0; r < world; ++r) buf[static_cast<size_t>(r)].assign(len, r + 1);
      const auto steps0 = ring_steps(0, world);
      REQUIRE(steps0.size() == 2 * static_cast<size_t>(world - 1));
      for (size_t s = 0; s < steps0.size(); ++s) {
        // Each rank sends its send_chunk to the next rank, who receives it as its recv_chunk.
        auto snapshot = buf;
        for (int r = 0; r < world; ++r) {
          const RingStep mine = ring_steps(r, world)[s];
          const int prev = (r + world - 1) % world;
          const RingStep theirs = ring_steps(prev, world)[s];
          REQUIRE(theirs.send_chunk == mine.recv_chunk);  // what arrives is what is expected
          const Span ch = ring_chunk(len, world, mine.recv_chunk);
          for (size_t i = ch.begin; i < ch.end(); ++i) {
            const long in = snapshot[static_cast<size_t>(prev)][i];
            auto& v = buf[static_cast<size_t>(r)][i];
            v = mine.reduce ? v + in : in;
          }
        }
      }
      const long sum = world * (world + 1) / 2;
      for (const auto& b : buf)
        for (long v : b) REQUIRE(v == sum);
    }
  }
}

TEST_CASE("pieces are whole elements, no larger than a slot, and cover the message",
          "[rdma][schedule]") {
  CHECK(pieces(0, 1024, 4).empty());
  const auto p = pieces(10, 4, 4);
  REQUIRE(p.size() == 3);
  CHECK(p[0] == Span{0, 4});
  CHECK(p[1] == Span{4, 4});
  CHECK(p[2] == Span{8, 2});  // the message ends mid-element: only the last piece is short
  // A slot that is not a multiple of the element size is rounded down to one.
  for (const auto& s : pieces(3001, 1023, 6)) CHECK((s.len % 6 == 0 || s.end() == 3001));
  CHECK(pieces(3001, 1023, 6)[0].len == 1020);
  // A slot smaller than an element still moves one element a piece.
  CHECK(pieces(8, 1, 4).size() == 2);
  size_t total = 0;
  for (const auto& s : pieces((64u << 20) + 6, 1u << 20, 2)) total += s.len;
  CHECK(total == (64u << 20) + 6);
  CHECK_THROWS(pieces(8, 4, 0));
}
