// Who sends what, when: the ring allreduce's arithmetic as pure functions, so that every
// transport (TCP, verbs, CUDA memory) runs the same schedule and the tests can check it without
// a network. A buffer of `count` elements is striped across rails (slice k on rail k); each
// rail's slice is cut into `world` ring chunks; each step moves one chunk to the next rank, in
// pieces no larger than a transport's staging slot, so that the send of piece i+1 overlaps the
// reduction of piece i.
#pragma once

#include <cstddef>
#include <vector>

namespace railyard::rdma {

struct Span {
  size_t begin = 0, len = 0;  // in elements, or bytes for pieces
  size_t end() const { return begin + len; }
  bool operator==(const Span&) const = default;
};

// Rail k's share of `count` elements: contiguous, sizes differ by at most one.
Span rail_slice(size_t count, size_t rails, size_t k);

// Ring chunk c of a slice of `len` elements cut `world` ways.
Span ring_chunk(size_t len, int world, int c);

struct RingStep {
  int send_chunk, recv_chunk;
  bool reduce;  // reduce-scatter (sum into the chunk) or all-gather (overwrite it)
};

// The 2(world-1) steps of rank `rank`: reduce-scatter, then all-gather. After them every chunk
// holds the sum; after the reduce-scatter, rank r owns chunk (r+1) % world.
std::vector<RingStep> ring_steps(int rank, int world);

// A message of `bytes` cut into pieces of at most `piece_bytes`, each a whole number of
// `granule`s (the element size) except where the message itself ends mid-granule. Sender and
// receiver compute the same pieces, so the receiver knows where each one lands.
std::vector<Span> pieces(size_t bytes, size_t piece_bytes, size_t granule);

}  // namespace railyard::rdma
