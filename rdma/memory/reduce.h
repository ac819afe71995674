// Element types and the sum that the ring applies as data arrives: float32, float16, bfloat16,
// int32, named as nccl-tests names them (-d float, half, bfloat16, int32). Half types are summed
// in float32 and rounded to nearest even once per step, as NCCL does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace railyard::rdma {

enum class DType { kFloat32, kFloat16, kBFloat16, kInt32 };

size_t elem_size(DType t);
std::optional<DType> parse_dtype(std::string_view nccl_tests_name);
const char* dtype_name(DType t);

// dst[i] += src[i] for n elements. Vectorised: the half types through AVX2/F16C where the CPU
// has them (chosen at run time), the others by the compiler.
void reduce_sum(void* dst, const void* src, size_t n, DType t);
// dst[i] = a[i] + b[i]: out-of-place, the first step of a reduction into a fresh buffer. dst may
// be a (then it is the above); otherwise none overlap.
void reduce_sum(void* dst, const void* a, const void* b, size_t n, DType t);

// Element i of a buffer as a double, and back (rounded to the type): for filling and checking.
double load(const void* buf, size_t i, DType t);
void store(void* buf, size_t i, double v, DType t);

}  // namespace railyard::rdma
