#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "rdma/bench/commands.h"
#include "rdma/bench/job.h"
#include "rdma/ring/nccl_backend.h"
#include "rdma/ring/ring.h"
#include "rdma/run/plot.h"

// nccl-tests' all_reduce_perf, by our ring or by NCCL: out-of-place and in-place per size,
// busbw = algbw * 2(n-1)/n, then each rail's busbw at the largest size.
namespace railyard::rdma::bench {
namespace {

// A bandwidth in nccl-tests' 6-wide column: two decimals, as nccl-tests prints; four below
// 1 GB/s, so that a slow link (a soft-RoCE rail moves a few MB/s) does not read as 0.00.
std::string gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v > 0 && v < 0.995 ? "%6.4f" : "%6.2f", v);
  return buf;
}

struct Measure {
  double us = 0;
  size_t wrong = 0;
  std::vector<double> rail_seconds;
};

// The run's buffers, allocated once at the largest size (as nccl-tests does), so that verbs
// registers them once and every size reuses them.
struct Buffers {
  Memory& memory;
  Buffer send, recv;
  std::vector<char> host;  // for filling and checking device memory
};

void progress(const Options& o, size_t bytes, int i, int n) {
  static const bool tty = ::isatty(2);
  if (tty && o.iters >= 10 && (i % 5 == 0 || i == n))
    std::fprintf(stderr, "\r  %s: %d/%d%s", size_label(static_cast<double>(bytes)).c_str(), i, n,
                 i == n ? "\r\033[K" : "");
}

Measure measure(Collective& coll, Buffers& buf, size_t count, DType type, bool in_place,
                const Options& o, int rank) {
  const size_t bytes = count * elem_size(type);
  char* s = buf.send.data();
  char* d = in_place ? s : buf.recv.data();
  auto init = [&] {
    if (buf.memory.on_device()) {
      fill(buf.host.data(), count, rank, type);
      buf.memory.copy(s, buf.host.data(), bytes);
    } else {
      fill(s, count, rank, type);
    }
  };
  Measure m;
  m.rail_seconds.assign(coll.rails() ? coll.rails() : 1, 0.0);
  init();
  for (int i = 0; i < o.warmup; ++i) coll.allreduce(s, d, count, type);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) {
    auto rs = coll.allreduce(s, d, count, type);
    for (size_t k = 0; k < rs.size() && k < m.rail_seconds.size(); ++k)
      m.rail_seconds[k] += rs[k] / o.iters;
    progress(o, bytes, i + 1, o.iters);
  }
  m.us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
         o.iters;
  if (o.check) {
    init();
    coll.allreduce(s, d, count, type);
    const char* result = d;
    if (buf.memory.on_device()) {
      buf.memory.copy(buf.host.data(), d, bytes);
      result = buf.host.data();
    }
    m.wrong = wrong(result, count, coll.world(), type);
  }
  return m;
}

}  // namespace

int run_allreduce(const Options& o) {
  const auto parsed = parse_dtype(o.dtype);
  if (!parsed) throw std::invalid_argument("-d " + o.dtype + ": float, half, bfloat16 or int32");
  const DType type = *parsed;
  const size_t es = elem_size(type);
  Job job = start_job(o);
  std::unique_ptr<Collective> coll;
  if (o.transport == "nccl") {
    // NCCL picks its own rails: hand it ours as NCCL_IB_HCA when they are RDMA devices, unless
    // the user set it.
    if (!o.rails.empty() && !std::getenv("NCCL_IB_HCA")) {
      std::string hca;
      for (const auto& e : job.entries)
        if (job.sysfs.open_dir(job.sysfs.sys("class/infiniband/" + e.substr(0, e.find(':')))))
          hca += (hca.empty() ? "=" : ",") + e;
      if (!hca.empty()) ::setenv("NCCL_IB_HCA", hca.c_str(), 1);
    }
    const std::string id = ring_broadcast(job.launch.rank, job.launch.world, job.ring,
                                          nccl_unique_id(job.launch.rank), 128, job.timeout);
    coll = nccl_collective(job.launch.rank, job.launch.world, id, pick_gpu(o));
  } else {
    coll =
        std::make_unique<Ring>(job.launch.rank, job.launch.world, make_links(o, job), *job.memory);
  }

  const size_t max_bytes = parse_size(o.max_bytes) / es * es;
  Buffers buf{*job.memory,
              Buffer(*job.memory, std::max(max_bytes, es)),
              Buffer(*job.memory, std::max(max_bytes, es)),
              {}};
  if (job.memory->on_device()) buf.host.resize(std::max(max_bytes, es));
  coll->prepare(buf.send.data(), buf.send.size());
  coll->prepare(buf.recv.data(), buf.recv.size());

  const bool root = job.launch.rank == 0;
  const double bus_factor =
      job.launch.world > 1 ? 2.0 * (job.launch.world - 1) / job.launch.world : 0.0;
  if (root) {
    std::printf("# railyard-bench allreduce: transport %s, memory %s, %d ranks, %zu rails (",
                o.transport.c_str(), job.memory->describe().c_str(), job.launch.world,
                job.addresses.size());
    for (size_t k = 0; k < job.addresses.size(); ++k)
      std::printf("%s%s", k ? ", " : "", job.addresses[k].c_str());
    std::printf("), iters %d, warmup %d, check %d\n", o.iters, o.warmup, o.check);
    for (size_t k = 0; k < coll->rails() && job.launch.world > 1; ++k)
      std::printf("#   rail %zu: %s\n", k, coll->describe_rail(k).c_str());
    std::printf("#\n");
    std::printf(
        "#                                                              out-of-place               "
        "        in-place\n");
    std::printf(
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
        "time   algbw   busbw #wrong\n");
    std::printf(
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
        "(us)  (GB/s)  (GB/s)\n");
  }
  nlohmann::json rows = nlohmann::json::array();
  double bw_sum = 0;
  int bw_n = 0;
  size_t total_wrong = 0;
  std::vector<double> last_rail_seconds;
  size_t last_bytes = 0;
  // For the plot: busbw per size, of each rail's slice and of the whole (in-place).
  const size_t nrails = std::max<size_t>(coll->rails(), 1);
  std::vector<Series> series(nrails + 1);
  series[0].name = "all rails";
  for (size_t k = 0; k < nrails; ++k)
    series[k + 1].name =
        "rail " + std::to_string(k) + (k < job.addresses.size() ? " " + job.addresses[k] : "");
  auto rail_busbw = [&](double bytes, double seconds) {
    return seconds > 0 ? bytes / static_cast<double>(nrails) / seconds / 1e9 * bus_factor : 0.0;
  };
  for (const size_t bytes : sizes(o, es)) {
    const size_t count = bytes / es;
    const Measure oop = measure(*coll, buf, count, type, false, o, job.launch.rank);
    const Measure ip = measure(*coll, buf, count, type, true, o, job.launch.rank);
    const double b = static_cast<double>(count * es);
    auto alg = [&](const Measure& m) { return b / m.us / 1e3; };
    total_wrong += oop.wrong + ip.wrong;
    bw_sum += alg(oop) * bus_factor + alg(ip) * bus_factor;
    bw_n += 2;
    last_rail_seconds = ip.rail_seconds;
    last_bytes = count * es;
    series[0].points.push_back({b, alg(ip) * bus_factor});
    for (size_t k = 0; k < nrails && k < ip.rail_seconds.size(); ++k)
      series[k + 1].points.push_back({b, rail_busbw(b, ip.rail_seconds[k])});
    if (root) {
      std::printf("%12zu  %12zu  %8s  %6s  %6d  %7.2f  %6s  %6s  %5zu  %7.2f  %6s  %6s  %5zu\n",
                  count * es, count, dtype_name(type), "sum", -1, oop.us, gbps(alg(oop)).c_str(),
                  gbps(alg(oop) * bus_factor).c_str(), oop.wrong, ip.us, gbps(alg(ip)).c_str(),
                  gbps(alg(ip) * bus_factor).c_str(), ip.wrong);
      std::fflush(stdout);
      rows.push_back({{"size", count * es},
                      {"count", count},
                      {"type", dtype_name(type)},
                      {"redop", "sum"},
                      {"root", -1},
                      {"out_of_place",
                       {{"time_us", oop.us},
                        {"algbw", alg(oop)},
                        {"busbw", alg(oop) * bus_factor},
                        {"wrong", oop.wrong}}},
                      {"in_place",
                       {{"time_us", ip.us},
                        {"algbw", alg(ip)},
                        {"busbw", alg(ip) * bus_factor},
                        {"wrong", ip.wrong}}}});
    }
  }
  if (root) {
    std::printf("# Out of bounds values : %zu %s\n", total_wrong, total_wrong ? "FAILED" : "OK");
    std::printf("# Avg bus bandwidth    : %g \n#\n", bw_n ? bw_sum / bw_n : 0.0);
    std::printf("# Per rail, largest size (%zu B, in-place):\n", last_bytes);
    nlohmann::json per_rail = nlohmann::json::array();
    for (size_t k = 0; k < coll->rails() && k < last_rail_seconds.size(); ++k) {
      const double busbw = rail_busbw(static_cast<double>(last_bytes), last_rail_seconds[k]);
      const std::string addr = k < job.addresses.size() ? job.addresses[k] : "";
      std::printf("#   rail %zu  %-15s  busbw %8s GB/s\n", k, addr.c_str(), gbps(busbw).c_str());
      per_rail.push_back({{"rail", k},
                          {"address", addr},
                          {"busbw", busbw},
                          {"path", job.launch.world > 1 ? coll->describe_rail(k) : "local"}});
    }
    write_output(o.json_file,
                 nlohmann::json{{"op", "allreduce"},
                                {"transport", o.transport},
                                {"memory", job.memory->describe()},
                                {"ranks", job.launch.world},
                                {"rows", rows},
                                {"avg_busbw", bw_n ? bw_sum / bw_n : 0.0},
                                {"out_of_bounds", total_wrong},
                                {"rails", per_rail}}
                         .dump(2) +
                     "\n",
                 "--json");
    write_output(o.plot_file,
                 svg_plot("railyard-bench allreduce, " + o.transport + ", " +
                              std::to_string(job.launch.world) + " ranks: busbw per size and rail",
                          series),
                 "--plot");
  }
  return total_wrong ? 1 : 0;
}

}  // namespace railyard::rdma::bench
