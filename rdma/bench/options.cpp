#include "rdma/bench/options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "rdma/memory/cuda_memory.h"

namespace railyard::rdma::bench {

size_t parse_size(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  switch (*end) {
    case 'K':
    case 'k':
      v *= 1024;
      break;
    case 'M':
    case 'm':
      v *= 1024 * 1024;
      break;
    case 'G':
    case 'g':
      v *= 1024.0 * 1024 * 1024;
      break;
    case 0:
      break;
    default:
      throw std::invalid_argument("'" + s + "' is not a size (like 8, 64K, 16M, 1G)");
  }
  return static_cast<size_t>(v);
}

std::vector<size_t> sizes(const Options& o, size_t granule) {
  std::vector<size_t> out;
  const size_t last = parse_size(o.max_bytes);
  for (size_t bytes = std::max(parse_size(o.min_bytes), granule); bytes <= last;
       bytes =
           std::max(bytes + granule, static_cast<size_t>(static_cast<double>(bytes) * o.factor)))
    out.push_back(bytes / granule * granule);
  return out;
}

// Element i of rank r: small integers, so every type's sums are exact and checkable (the
// largest, 4 ranks x 7, is exact in bfloat16's 8-bit mantissa).
void fill(void* p, size_t n, int rank, DType t) {
  for (size_t i = 0; i < n; ++i) store(p, i, (rank + 1) * static_cast<int>(i % 7 + 1), t);
}
size_t wrong(const void* p, size_t n, int world, DType t) {
  size_t bad = 0;
  const int ranks = world * (world + 1) / 2;
  for (size_t i = 0; i < n; ++i) bad += load(p, i, t) != ranks * static_cast<int>(i % 7 + 1);
  return bad;
}

std::optional<std::string> env(const std::string& k) {
  const char* v = std::getenv(k.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

int pick_gpu(const Options& o) {
  if (o.gpu >= 0) return o.gpu;
  for (const char* k : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (auto v = env(k)) {
      const int n = std::max(cuda_device_count(), 1);
      return std::stoi(*v) % n;
    }
  return 0;
}

void write_output(const std::string& path, const std::string& text, const char* flag) {
  if (path.empty()) return;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw std::runtime_error(std::string(flag) + " " + path + ": cannot write");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(std::string(flag) + " " + path + ": cannot write");
  }
}

}  // namespace railyard::rdma::bench
