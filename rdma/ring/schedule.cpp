#include "rdma/ring/schedule.h"

#include <algorithm>
#include <stdexcept>

namespace railyard::rdma {

Span rail_slice(size_t count, size_t rails, size_t k) {
  if (rails == 0 || k >= rails) throw std::invalid_argument("rail_slice: no such rail");
  const size_t b = count * k / rails, e = count * (k + 1) / rails;
  return {b, e - b};
}

Span ring_chunk(size_t len, int world, int c) {
  if (world <= 0 || c < 0 || c >= world) throw std::invalid_argument("ring_chunk: no such chunk");
  const auto n = static_cast<size_t>(world), i = static_cast<size_t>(c);
  const size_t b = len * i / n, e = len * (i + 1) / n;
  return {b, e - b};
}

std::vector<RingStep> ring_steps(int rank, int world) {
  std::vector<RingStep> steps;
  const int n = world;
  for (int s = 0; s < n - 1; ++s)
    steps.push_back({(rank - s + n) % n, (rank - s - 1 + n) % n, true});
  for (int s = 0; s < n - 1; ++s)
    steps.push_back({(rank + 1 - s + n) % n, (rank - s + n) % n, false});
  return steps;
}

std::vector<Span> pieces(size_t bytes, size_t piece_bytes, size_t granule) {
  if (granule == 0) throw std::invalid_argument("pieces: granule 0");
  const size_t step = std::max(granule, piece_bytes / granule * granule);
  std::vector<Span> out;
  for (size_t at = 0; at < bytes; at += step) out.push_back({at, std::min(step, bytes - at)});
  return out;
}

}  // namespace railyard::rdma
