// railyard-bench allreduce --transport tcp|verbs|nccl: a ring allreduce striped over the rails
// (or NCCL's), printed as nccl-tests prints all_reduce_perf (so its parsers and
// railyard-validate read it), then a per-rail summary. busbw = algbw * 2(n-1)/n, as nccl-tests
// computes it for allreduce.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "rdma/bootstrap.h"
#include "rdma/cuda_memory.h"
#include "rdma/launch.h"
#include "rdma/nccl_backend.h"
#include "rdma/p2p.h"
#include "rdma/plot.h"
#include "rdma/rails.h"
#include "rdma/ring.h"
#include "rdma/tcp_link.h"
#include "rdma/verbs_link.h"
#include "topology/sysfs.h"

namespace r = railyard::rdma;

namespace {

struct Options {
  std::string op, transport = "tcp", rendezvous, rails, json_file, dtype = "float";
  std::string memory = "host", gpudirect, plot_file;
  bool hugepages = false;
  int rank = -1, world = -1, iters = 20, warmup = 5, check = 1, timeout_s = 60;
  int gpu = -1, gid_index = -1, streams = 1;
  std::string min_bytes = "8", max_bytes = "64M";
  double factor = 2;
};

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

// Element i of rank r: small integers, so every type's sums are exact and checkable (the
// largest, 4 ranks x 7, is exact in bfloat16's 8-bit mantissa).
void fill(void* p, size_t n, int rank, r::DType t) {
  for (size_t i = 0; i < n; ++i) r::store(p, i, (rank + 1) * static_cast<int>(i % 7 + 1), t);
}
size_t wrong(const void* p, size_t n, int world, r::DType t) {
  size_t bad = 0;
  const int ranks = world * (world + 1) / 2;
  for (size_t i = 0; i < n; ++i) bad += r::load(p, i, t) != ranks * static_cast<int>(i % 7 + 1);
  return bad;
}

struct Measure {
  double us = 0;
  size_t wrong = 0;
  std::vector<double> rail_seconds;
};

// The run's buffers, allocated once at the largest size (as nccl-tests does), so that verbs
// registers them once and every size reuses them.
struct Buffers {
  r::Memory& memory;
  r::Buffer send, recv;
  std::vector<char> host;  // for filling and checking device memory
};

void progress(const Options& o, size_t bytes, int i, int n) {
  static const bool tty = ::isatty(2);
  if (tty && o.iters >= 10 && (i % 5 == 0 || i == n))
    std::fprintf(stderr, "\r  %s: %d/%d%s", r::size_label(static_cast<double>(bytes)).c_str(), i, n,
                 i == n ? "\r\033[K" : "");
}

Measure measure(r::Collective& coll, Buffers& buf, size_t count, r::DType type, bool in_place,
                const Options& o, int rank) {
  const size_t bytes = count * r::elem_size(type);
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

// Per rail and size: 0->1, 1->0, both at once, latency; rank 0 prints (perftest's view of a link).
int run_p2p(const Options& o, const r::Launch& launch, const std::vector<std::string>& rails,
            r::LinkPair& pair, const r::Memory& memory) {
  const bool root = launch.rank == 0;
  if (root) {
    std::printf(
        "# railyard-bench p2p: transport %s, memory %s, 2 ranks, %zu rails, iters %d, warmup %d, "
        "check %d\n",
        o.transport.c_str(), memory.describe().c_str(), rails.size(), o.iters, o.warmup, o.check);
    for (size_t k = 0; k < pair.rails(); ++k)
      std::printf("#   rail %zu: %s\n", k, pair.link(k).describe().c_str());
    std::printf("#%5s  %-15s  %12s  %11s  %11s  %11s  %10s  %6s\n", "rail", "address", "size(B)",
                "0->1(GB/s)", "1->0(GB/s)", "both(GB/s)", "lat(us)", "#wrong");
  }
  nlohmann::json rows = nlohmann::json::array();
  size_t total_wrong = 0;
  std::vector<r::P2pResult> largest(rails.size());
  for (size_t k = 0; k < rails.size(); ++k) {
    for (size_t bytes = std::max<size_t>(parse_size(o.min_bytes), 1);
         bytes <= parse_size(o.max_bytes);
         bytes = std::max(bytes + 1, static_cast<size_t>(static_cast<double>(bytes) * o.factor))) {
      const r::P2pResult m = pair.measure(k, bytes, o.iters, o.warmup, o.check != 0);
      largest[k] = m;
      total_wrong += m.wrong;
      if (!root) continue;
      std::printf("%6zu  %-15s  %12zu  %11.2f  %11.2f  %11.2f  %10.2f  %6zu\n", k, rails[k].c_str(),
                  bytes, m.gbps_0to1, m.gbps_1to0, m.gbps_both, m.latency_us, m.wrong);
      std::fflush(stdout);
      rows.push_back({{"rail", k},
                      {"address", rails[k]},
                      {"size", bytes},
                      {"gbps_0to1", m.gbps_0to1},
                      {"gbps_1to0", m.gbps_1to0},
                      {"gbps_both", m.gbps_both},
                      {"latency_us", m.latency_us},
                      {"wrong", m.wrong}});
    }
  }
  if (root) {
    std::printf("# Wrong bytes : %zu %s\n# Per rail, largest size:\n", total_wrong,
                total_wrong ? "FAILED" : "OK");
    for (size_t k = 0; k < rails.size(); ++k)
      std::printf(
          "#   rail %zu  %-15s  0->1 %8.2f  1->0 %8.2f  both %8.2f GB/s  latency %8.2f us\n", k,
          rails[k].c_str(), largest[k].gbps_0to1, largest[k].gbps_1to0, largest[k].gbps_both,
          largest[k].latency_us);
    if (!o.json_file.empty())
      std::ofstream(o.json_file) << nlohmann::json{{"op", "p2p"},
                                                   {"transport", o.transport},
                                                   {"memory", memory.describe()},
                                                   {"rows", rows},
                                                   {"wrong", total_wrong}}
                                        .dump(2)
                                 << "\n";
  }
  return total_wrong ? 1 : 0;
}

std::optional<std::string> env(const std::string& k) {
  const char* v = std::getenv(k.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

// The GPU of this rank: --gpu, else the launcher's local rank, as one rank per GPU runs.
int pick_gpu(const Options& o) {
  if (o.gpu >= 0) return o.gpu;
  for (const char* k : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (auto v = env(k)) {
      const int n = std::max(r::cuda_device_count(), 1);
      return std::stoi(*v) % n;
    }
  return 0;
}

// The rails' links for our ring: TCP over the neighbour sockets, or verbs queue pairs set up
// through them.
std::vector<std::unique_ptr<r::RingLink>> make_links(const Options& o, r::RingSockets ring,
                                                     const std::vector<r::RailPlan>& plans,
                                                     const std::vector<std::string>& addresses,
                                                     r::Memory& memory,
                                                     const railyard::topology::Sysfs& sysfs,
                                                     std::chrono::milliseconds timeout) {
  std::vector<std::unique_ptr<r::RingLink>> links;
  if (o.transport == "tcp") {
    for (size_t k = 0; k < ring.next.size(); ++k)
      links.push_back(std::make_unique<r::TcpLink>(std::move(ring.next[k]), std::move(ring.prev[k]),
                                                   memory, ring.next_names[k], ring.prev_names[k],
                                                   addresses[k], timeout));
    return links;
  }
  const r::RegPath reg = r::choose_registration(
      {memory.on_device(), memory.dmabuf_supported(), r::peermem_loaded(sysfs.root())},
      o.gpudirect);
  for (size_t k = 0; k < ring.next.size(); ++k) {
    r::VerbsOptions vo;
    vo.plan = plans[k];
    vo.registration = reg;
    if (auto tc = env("NCCL_IB_TC")) vo.traffic_class = std::stoi(*tc);
    links.push_back(r::make_verbs_link(std::move(ring.next[k][0]), std::move(ring.prev[k][0]),
                                       ring.next_names[k], ring.prev_names[k], memory, vo,
                                       timeout));
  }
  return links;
}

// The reduction alone, where the ring runs it (CPU, or the CUDA kernel): dst = a + b per size,
// GB/s of the three streams it moves, every element checked. No ranks, no network.
int run_reduce(const Options& o, r::DType type) {
  const size_t es = r::elem_size(type);
  std::unique_ptr<r::Memory> memory =
      o.memory == "cuda" ? r::cuda_memory(pick_gpu(o)) : r::host_memory(o.hugepages);
  const size_t max_bytes = std::max(parse_size(o.max_bytes) / es * es, es);
  r::Buffer a(*memory, max_bytes), b(*memory, max_bytes), d(*memory, max_bytes);
  std::vector<char> host(max_bytes);
  std::printf("# railyard-bench reduce: memory %s, type %s, iters %d, check %d\n",
              memory->describe().c_str(), r::dtype_name(type), o.iters, o.check);
  std::printf("#%11s  %12s  %10s  %10s  %6s\n", "size(B)", "count", "time(us)", "GB/s", "#wrong");
  nlohmann::json rows = nlohmann::json::array();
  size_t total_wrong = 0;
  for (size_t bytes = std::max(parse_size(o.min_bytes), es); bytes <= max_bytes;
       bytes = std::max(bytes + es, static_cast<size_t>(static_cast<double>(bytes) * o.factor))) {
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
  if (!o.json_file.empty())
    std::ofstream(o.json_file) << nlohmann::json{{"op", "reduce"},
                                                 {"memory", memory->describe()},
                                                 {"type", r::dtype_name(type)},
                                                 {"rows", rows},
                                                 {"wrong", total_wrong}}
                                      .dump(2)
                               << "\n";
  return total_wrong ? 1 : 0;
}

int run(const Options& o) {
  const auto parsed = r::parse_dtype(o.dtype);
  if (!parsed) throw std::invalid_argument("-d " + o.dtype + ": float, half, bfloat16 or int32");
  if (o.op == "reduce") return run_reduce(o, *parsed);
  const r::Launch launch = r::resolve_launch({o.rank, o.world, o.rendezvous, ""}, env);
  const r::DType type = *parsed;
  const size_t es = r::elem_size(type);
  if (o.transport == "nccl" && o.memory != "cuda")
    throw std::invalid_argument("--transport nccl runs on GPU memory: add --memory cuda");
  if (o.transport == "nccl" && o.op == "p2p")
    throw std::invalid_argument("p2p runs over --transport tcp");
  if (o.transport == "verbs" && o.op == "p2p")
    throw std::invalid_argument(
        "p2p over verbs is not in this version: use perftest's "
        "ib_write_bw per rail, or --transport tcp");
  std::vector<std::string> entries = r::rail_entries(o.rails, std::getenv("NCCL_IB_HCA"));
  std::vector<std::string> rails;
  const railyard::topology::Sysfs sysfs(railyard::topology::sysfs_root_from(""));
  for (const auto& e : entries) rails.push_back(r::resolve_rail(e, sysfs.root()));
  const auto timeout = std::chrono::seconds(o.timeout_s);
  std::vector<r::Socket> listeners;
  std::vector<r::Endpoint> mine;
  for (const auto& a : rails) {
    listeners.push_back(r::Socket::listen_on(a, 0));
    mine.push_back({a, listeners.back().local_port()});
  }
  const r::Endpoint rv =
      launch.world > 1 ? r::Endpoint::parse(launch.rendezvous) : r::Endpoint{"127.0.0.1", 1};
  if (o.op == "p2p" && launch.world != 2)
    throw std::invalid_argument("p2p runs between exactly 2 ranks, not " +
                                std::to_string(launch.world));
  // Verbs rails: device, port, GID and MTU from sysfs, before anyone waits on this rank.
  std::vector<r::RailPlan> plans;
  if (o.transport == "verbs") {
    int gid_index = o.gid_index;
    if (gid_index < 0)
      if (auto v = env("NCCL_IB_GID_INDEX")) gid_index = std::stoi(*v);
    for (size_t k = 0; k < entries.size(); ++k)
      plans.push_back(r::plan_rail(sysfs, entries[k], rails[k], gid_index));
  }
  const auto table = r::exchange_endpoints(launch.rank, launch.world, rv, mine, timeout);

  std::unique_ptr<r::Memory> memory =
      o.memory == "cuda" ? r::cuda_memory(pick_gpu(o)) : r::host_memory(o.hugepages);
  r::RingSockets ring = r::connect_ring(launch.rank, launch.world, rails, listeners, table, timeout,
                                        o.transport == "tcp" ? o.streams : 1);
  if (o.op == "p2p") {
    r::LinkPair pair(launch.rank,
                     make_links(o, std::move(ring), plans, rails, *memory, sysfs, timeout), *memory,
                     parse_size(o.max_bytes));
    return run_p2p(o, launch, rails, pair, *memory);
  }
  std::unique_ptr<r::Collective> coll;
  if (o.transport == "nccl") {
    // NCCL picks its own rails: hand it ours as NCCL_IB_HCA when they are RDMA devices, unless
    // the user set it.
    if (!o.rails.empty() && !std::getenv("NCCL_IB_HCA")) {
      std::string hca;
      for (const auto& e : entries)
        if (sysfs.open_dir(sysfs.sys("class/infiniband/" + e.substr(0, e.find(':')))))
          hca += (hca.empty() ? "=" : ",") + e;
      if (!hca.empty()) ::setenv("NCCL_IB_HCA", hca.c_str(), 1);
    }
    const std::string id = r::ring_broadcast(launch.rank, launch.world, ring,
                                             r::nccl_unique_id(launch.rank), 128, timeout);
    coll = r::nccl_collective(launch.rank, launch.world, id, pick_gpu(o));
  } else {
    coll = std::make_unique<r::Ring>(
        launch.rank, launch.world,
        make_links(o, std::move(ring), plans, rails, *memory, sysfs, timeout), *memory);
  }

  const size_t max_bytes = parse_size(o.max_bytes) / es * es;
  Buffers buf{*memory,
              r::Buffer(*memory, std::max(max_bytes, es)),
              r::Buffer(*memory, std::max(max_bytes, es)),
              {}};
  if (memory->on_device()) buf.host.resize(std::max(max_bytes, es));
  coll->prepare(buf.send.data(), buf.send.size());
  coll->prepare(buf.recv.data(), buf.recv.size());

  const bool root = launch.rank == 0;
  const double bus_factor = launch.world > 1 ? 2.0 * (launch.world - 1) / launch.world : 0.0;
  if (root) {
    std::printf("# railyard-bench allreduce: transport %s, memory %s, %d ranks, %zu rails (",
                o.transport.c_str(), memory->describe().c_str(), launch.world, rails.size());
    for (size_t k = 0; k < rails.size(); ++k) std::printf("%s%s", k ? ", " : "", rails[k].c_str());
    std::printf("), iters %d, warmup %d, check %d\n", o.iters, o.warmup, o.check);
    for (size_t k = 0; k < coll->rails() && launch.world > 1; ++k)
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
  std::vector<r::Series> series(nrails + 1);
  series[0].name = "allreduce";
  for (size_t k = 0; k < nrails; ++k)
    series[k + 1].name = "rail " + std::to_string(k) + (k < rails.size() ? " " + rails[k] : "");
  auto rail_busbw = [&](double bytes, double seconds) {
    return seconds > 0 ? bytes / static_cast<double>(nrails) / seconds / 1e9 * bus_factor : 0.0;
  };
  for (size_t bytes = std::max(parse_size(o.min_bytes), es); bytes <= max_bytes;
       bytes = std::max(bytes + es, static_cast<size_t>(static_cast<double>(bytes) * o.factor))) {
    const size_t count = bytes / es;
    const Measure oop = measure(*coll, buf, count, type, false, o, launch.rank);
    const Measure ip = measure(*coll, buf, count, type, true, o, launch.rank);
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
      std::printf(
          "%12zu  %12zu  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %5zu  %7.2f  %6.2f  %6.2f  %5zu\n",
          count * es, count, r::dtype_name(type), "sum", -1, oop.us, alg(oop),
          alg(oop) * bus_factor, oop.wrong, ip.us, alg(ip), alg(ip) * bus_factor, ip.wrong);
      std::fflush(stdout);
      rows.push_back({{"size", count * es},
                      {"count", count},
                      {"type", r::dtype_name(type)},
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
      const std::string addr = k < rails.size() ? rails[k] : "";
      std::printf("#   rail %zu  %-15s  busbw %8.2f GB/s\n", k, addr.c_str(), busbw);
      per_rail.push_back({{"rail", k},
                          {"address", addr},
                          {"busbw", busbw},
                          {"path", launch.world > 1 ? coll->describe_rail(k) : "local"}});
    }
    if (!o.json_file.empty()) {
      std::ofstream(o.json_file) << nlohmann::json{{"op", "allreduce"},
                                                   {"transport", o.transport},
                                                   {"memory", memory->describe()},
                                                   {"ranks", launch.world},
                                                   {"rows", rows},
                                                   {"avg_busbw", bw_n ? bw_sum / bw_n : 0.0},
                                                   {"out_of_bounds", total_wrong},
                                                   {"rails", per_rail}}
                                        .dump(2)
                                 << "\n";
    }
    if (!o.plot_file.empty()) {
      std::ofstream f(o.plot_file);
      f << r::svg_plot("railyard-bench allreduce, " + o.transport + ", " +
                           std::to_string(launch.world) + " ranks: busbw per size and rail",
                       series);
      if (!f) throw std::runtime_error("--plot " + o.plot_file + ": cannot write");
    }
  }
  return total_wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard-bench: rail bandwidth and ring allreduce"};
  Options o;
  app.add_option("op", o.op,
                 "allreduce; p2p (per-rail bandwidth and latency between 2 ranks); reduce (the "
                 "sum alone, on the CPU or the GPU)")
      ->required()
      ->check(CLI::IsMember({"allreduce", "p2p", "reduce"}));
  app.add_option("--transport", o.transport,
                 "tcp, verbs (RDMA RC; --rails names RDMA devices) or nccl (--memory cuda)")
      ->check(CLI::IsMember({"tcp", "verbs", "nccl"}));
  app.add_option("--memory", o.memory, "where the buffers are: host or cuda")
      ->check(CLI::IsMember({"host", "cuda"}));
  app.add_flag("--hugepages", o.hugepages, "host buffers on transparent hugepages");
  app.add_option("--streams", o.streams, "tcp: connections per rail and direction")
      ->check(CLI::Range(1, 64));
  app.add_option("--gpu", o.gpu, "GPU for --memory cuda (default: the launcher's local rank)");
  app.add_option(
      "--gpudirect", o.gpudirect,
      "verbs with GPU memory: dmabuf, peermem or staged (default: the first that works)");
  app.add_option("--gid-index", o.gid_index,
                 "verbs: GID index (default: NCCL_IB_GID_INDEX, else RoCE v2 of the rail address)");
  app.add_option("--plot", o.plot_file, "write an SVG plot of busbw per size and rail");
  app.add_option("--rank", o.rank,
                 "this rank (or OMPI_COMM_WORLD_RANK, JOB_COMPLETION_INDEX, RANK)");
  app.add_option("--world-size", o.world, "number of ranks (or OMPI_COMM_WORLD_SIZE, WORLD_SIZE)");
  app.add_option("--rendezvous", o.rendezvous, "HOST:PORT of rank 0 (or MASTER_ADDR/MASTER_PORT)");
  app.add_option(
      "--rails", o.rails,
      "comma-separated rail interfaces, IPv4 addresses or RDMA devices (default: NCCL_IB_HCA)");
  app.add_option("-b", o.min_bytes, "smallest size (8, 64K, 16M, 1G)");
  app.add_option("-e", o.max_bytes, "largest size");
  app.add_option("-f", o.factor, "size factor");
  app.add_option("-n", o.iters, "timed iterations");
  app.add_option("-w", o.warmup, "warmup iterations");
  app.add_option("-c", o.check, "check every element (1) or not (0)");
  app.add_option("-d", o.dtype, "float, half, bfloat16 or int32 (nccl-tests' names)");
  app.add_option("--timeout", o.timeout_s, "seconds to wait for a peer before naming it");
  app.add_option("--json", o.json_file, "write results as JSON");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "railyard-bench: %s\n", e.what());
    return 2;
  }
}
