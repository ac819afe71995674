#include "rdma/memory/reduce.h"

#include <immintrin.h>

#include <cstring>

namespace railyard::rdma {
namespace {

float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(nan ? (u >> 16) | 0x40u : rounded >> 16);
}

template <class T>
void add(T* __restrict d, const T* __restrict s, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] += s[i];  // vectorised by the compiler (-O3)
}
template <class T>
void add(T* __restrict d, const T* __restrict a, const T* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = a[i] + b[i];
}
// d = a + b, where d may be a: each case through the loop whose restrict promise holds.
template <class T>
void sum(T* d, const T* a, const T* b, size_t n) {
  d == a ? add(d, b, n) : add(d, a, b, n);
}

// Half types: GCC does not vectorise the conversions, so the AVX2/F16C build is written with
// intrinsics (8 elements a step, summed in float32, rounded to nearest even), chosen at run time;
// the scalar loops are the reference and the fallback. `a` may be `d` (in place).
void add_f16_scalar(_Float16* d, const _Float16* a, const _Float16* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    d[i] = static_cast<_Float16>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
}

void add_bf16_scalar(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i]));
}

__attribute__((target("avx2,f16c"))) void add_f16_avx2(_Float16* d, const _Float16* a,
                                                       const _Float16* b, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  add_f16_scalar(d + i, a + i, b + i, n - i);
}

__attribute__((target("avx2"))) __m256 bf16x8_to_float(const uint16_t* p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

__attribute__((target("avx2"))) void add_bf16_avx2(uint16_t* d, const uint16_t* a,
                                                   const uint16_t* b, size_t n) {
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x40);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u =
        _mm256_castps_si256(_mm256_add_ps(bf16x8_to_float(a + i), bf16x8_to_float(b + i)));
    // As float_to_bf16: u + 0x7fff + lsb, high half; NaNs stay NaN (quiet bit set).
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(bias, lsb)), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet), nan);
    // 8 x 32-bit (each < 2^16) to 8 x 16-bit: pack within lanes, then gather the two halves.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_castsi256_si128(packed));
  }
  add_bf16_scalar(d + i, a + i, b + i, n - i);
}

bool have_avx2_f16c() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return yes;
}

void add_f16(_Float16* d, const _Float16* a, const _Float16* b, size_t n) {
  have_avx2_f16c() ? add_f16_avx2(d, a, b, n) : add_f16_scalar(d, a, b, n);
}

void add_bf16(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
  have_avx2_f16c() ? add_bf16_avx2(d, a, b, n) : add_bf16_scalar(d, a, b, n);
}

}  // namespace

size_t elem_size(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 ? 2 : 4;
}

std::optional<DType> parse_dtype(std::string_view n) {
  if (n == "float" || n == "float32") return DType::kFloat32;
  if (n == "half" || n == "float16") return DType::kFloat16;
  if (n == "bfloat16") return DType::kBFloat16;
  if (n == "int32" || n == "int") return DType::kInt32;
  return std::nullopt;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat16:
      return "half";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kInt32:
      return "int32";
  }
  return "?";
}

void reduce_sum(void* dst, const void* src, size_t n, DType t) {
  reduce_sum(dst, dst, src, n, t);
}

void reduce_sum(void* dst, const void* a, const void* b, size_t n, DType t) {
  switch (t) {
    case DType::kFloat32:
      sum(static_cast<float*>(dst), static_cast<const float*>(a), static_cast<const float*>(b), n);
      break;
    case DType::kInt32:
      sum(static_cast<int32_t*>(dst), static_cast<const int32_t*>(a),
          static_cast<const int32_t*>(b), n);
      break;
    case DType::kFloat16:
      add_f16(static_cast<_Float16*>(dst), static_cast<const _Float16*>(a),
              static_cast<const _Float16*>(b), n);
      break;
    case DType::kBFloat16:
      add_bf16(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(a),
               static_cast<const uint16_t*>(b), n);
      break;
  }
}

double load(const void* buf, size_t i, DType t) {
  switch (t) {
    case DType::kFloat32:
      return static_cast<const float*>(buf)[i];
    case DType::kInt32:
      return static_cast<const int32_t*>(buf)[i];
    case DType::kFloat16:
      return static_cast<float>(static_cast<const _Float16*>(buf)[i]);
    case DType::kBFloat16:
      return bf16_to_float(static_cast<const uint16_t*>(buf)[i]);
  }
  return 0;
}

void store(void* buf, size_t i, double v, DType t) {
  switch (t) {
    case DType::kFloat32:
      static_cast<float*>(buf)[i] = static_cast<float>(v);
      break;
    case DType::kInt32:
      static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v);
      break;
    case DType::kFloat16:
      static_cast<_Float16*>(buf)[i] = static_cast<_Float16>(v);
      break;
    case DType::kBFloat16:
      static_cast<uint16_t*>(buf)[i] = float_to_bf16(static_cast<float>(v));
      break;
  }
}

}  // namespace railyard::rdma
