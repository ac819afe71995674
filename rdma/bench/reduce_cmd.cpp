#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "rdma/bench/commands.h"
#include "rdma/memory/cuda_memory.h"
#include "rdma/memory/memory.h"
#include "rdma/run/plot.h"

namespace railyard::rdma::bench {

// The reduction alone, where the ring runs it (CPU, or the CUDA kernel): dst = a + b per size,
// GB/s of the three streams it moves, every element checked. No ranks, no network.
int run_reduce(const Options& o) {
  const auto parsed = parse_dtype(o.dtype);
  if (!parsed) throw std::invalid_argument("-d " + o.dtype + ": float, half, bfloat16 or int32");
  const DType type = *parsed;
  const size_t es = elem_size(type);
  std::unique_ptr<Memory> memory =
      o.memory == "cuda" ? cuda_memory(pick_gpu(o)) : host_memory(o.hugepages);
  const size_t max_bytes = std::max(parse_size(o.max_bytes) / es * es, es);
  Buffer a(*memory, max_bytes), b(*memory, max_bytes), d(*memory, max_bytes);
  std::vector<char> host(max_bytes);
  std::printf("# railyard-bench reduce: memory %s, type %s, iters %d, check %d\n",
              memory->describe().c_str(), dtype_name(type), o.iters, o.check);
  std::printf("#%11s  %12s  %10s  %10s  %6s\n", "size(B)", "count", "time(us)", "GB/s", "#wrong");
  nlohmann::json rows = nlohmann::json::array();
  size_t total_wrong = 0;
  for (const size_t bytes : sizes(o, es)) {
    const size_t count = bytes / es;
    fill(host.data(), count, 0, type);  // a: 1..7, b: 2..14, the sum 3..21, exact in every type
    memory->copy(a.data(), host.data(), count * es);
    fill(host.data(), count, 1, type);
    memory->copy(b.data(), host.data(), count * es);
    for (int i = 0; i < o.warmup; ++i) memory->reduce(d.data(), a.data(), b.data(), count, type);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.iters; ++i) memory->reduce(d.data(), a.data(), b.data(), count, type);
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        std::max(o.iters, 1);
    size_t bad = 0;
    if (o.check) {
      memory->copy(host.data(), d.data(), count * es);
      bad = wrong(host.data(), count, 2, type);
    }
    total_wrong += bad;
    const double gbps = 3.0 * static_cast<double>(count * es) / us / 1e3;
    std::printf("%12zu  %12zu  %10.2f  %10.2f  %6zu\n", count * es, count, us, gbps, bad);
    std::fflush(stdout);
    rows.push_back({{"size", count * es}, {"time_us", us}, {"gbps", gbps}, {"wrong", bad}});
  }
  std::printf("# Out of bounds values : %zu %s\n", total_wrong, total_wrong ? "FAILED" : "OK");
  write_output(o.json_file,
               nlohmann::json{{"op", "reduce"},
                              {"memory", memory->describe()},
                              {"type", dtype_name(type)},
                              {"rows", rows},
                              {"wrong", total_wrong}}
                       .dump(2) +
                   "\n",
               "--json");
  return total_wrong ? 1 : 0;
}

}  // namespace railyard::rdma::bench
