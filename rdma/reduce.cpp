#include "rdma/reduce.h"

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

// One build for CPUs with AVX2 and F16C (vcvtph2ps/vcvtps2ph), one for any x86-64; the loader
// picks (GCC function multiversioning).
__attribute__((target_clones("arch=x86-64-v3", "default"))) void add_f16(
    _Float16* __restrict d, const _Float16* __restrict s, size_t n) {
  for (size_t i = 0; i < n; ++i)
    d[i] = static_cast<_Float16>(static_cast<float>(d[i]) + static_cast<float>(s[i]));
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) void add_f16(
    _Float16* __restrict d, const _Float16* __restrict a, const _Float16* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    d[i] = static_cast<_Float16>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) void add_bf16(
    uint16_t* __restrict d, const uint16_t* __restrict s, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = float_to_bf16(bf16_to_float(d[i]) + bf16_to_float(s[i]));
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) void add_bf16(
    uint16_t* __restrict d, const uint16_t* __restrict a, const uint16_t* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i]));
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
  switch (t) {
    case DType::kFloat32:
      add(static_cast<float*>(dst), static_cast<const float*>(src), n);
      break;
    case DType::kInt32:
      add(static_cast<int32_t*>(dst), static_cast<const int32_t*>(src), n);
      break;
    case DType::kFloat16:
      add_f16(static_cast<_Float16*>(dst), static_cast<const _Float16*>(src), n);
      break;
    case DType::kBFloat16:
      add_bf16(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), n);
      break;
  }
}

void reduce_sum(void* dst, const void* a, const void* b, size_t n, DType t) {
  if (dst == a) return reduce_sum(dst, b, n, t);
  switch (t) {
    case DType::kFloat32:
      add(static_cast<float*>(dst), static_cast<const float*>(a), static_cast<const float*>(b), n);
      break;
    case DType::kInt32:
      add(static_cast<int32_t*>(dst), static_cast<const int32_t*>(a),
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
