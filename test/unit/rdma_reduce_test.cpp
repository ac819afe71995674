// The CPU sums (rdma/memory/reduce.h) against element-by-element references, bit for bit: the AVX2
// paths for the half types must round exactly as the scalar ones, NaN and infinity included,
// for lengths that leave a tail, in place and out of place.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rdma/memory/reduce.h"

using namespace railyard::rdma;

namespace {

float bf16_bits_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t reference_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace

TEST_CASE("bfloat16 sums round to nearest even, bit for bit, NaN and infinity included",
          "[rdma][reduce]") {
  std::mt19937 rng(7);
  for (size_t n : {1u, 7u, 8u, 9u, 1000u, 4099u}) {
    std::vector<uint16_t> a(n), b(n), ref(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<uint16_t>(rng());
      b[i] = static_cast<uint16_t>(rng());
      if (i % 97 == 3) a[i] = 0x7f80;  // +inf
      if (i % 89 == 5) b[i] = 0x7fc1;  // NaN
      ref[i] = reference_bf16(bf16_bits_to_float(a[i]) + bf16_bits_to_float(b[i]));
    }
    std::vector<uint16_t> out(n);
    reduce_sum(out.data(), a.data(), b.data(), n, DType::kBFloat16);
    CHECK(out == ref);
    reduce_sum(a.data(), b.data(), n, DType::kBFloat16);  // in place
    CHECK(a == ref);
  }
}

TEST_CASE("float16 sums match the scalar conversion, bit for bit", "[rdma][reduce]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> v(-60000.0f, 60000.0f);
  for (size_t n : {3u, 8u, 15u, 1024u, 4097u}) {
    std::vector<_Float16> a(n), b(n), ref(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<_Float16>(v(rng) / static_cast<float>(1 + i % 1000));
      b[i] = static_cast<_Float16>(v(rng));
      ref[i] = static_cast<_Float16>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
    }
    std::vector<_Float16> out(n);
    reduce_sum(out.data(), a.data(), b.data(), n, DType::kFloat16);
    CHECK(std::memcmp(out.data(), ref.data(), n * 2) == 0);  // overflow to inf included
    reduce_sum(a.data(), b.data(), n, DType::kFloat16);
    CHECK(std::memcmp(a.data(), ref.data(), n * 2) == 0);
  }
}

TEST_CASE("float32 and int32 sums, in place and out of place", "[rdma][reduce]") {
  std::vector<float> fa(1001), fb(1001), fo(1001);
  std::vector<int32_t> ia(1001), ib(1001), io(1001);
  for (int i = 0; i < 1001; ++i) {
    fa[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i);
    fb[static_cast<size_t>(i)] = 2.0f;
    ia[static_cast<size_t>(i)] = i;
    ib[static_cast<size_t>(i)] = -2 * i;
  }
  reduce_sum(fo.data(), fa.data(), fb.data(), 1001, DType::kFloat32);
  reduce_sum(io.data(), ia.data(), ib.data(), 1001, DType::kInt32);
  CHECK(fo[1000] == 502.0f);
  CHECK(io[1000] == -1000);
  reduce_sum(fa.data(), fb.data(), 1001, DType::kFloat32);
  CHECK(fa == fo);
}
