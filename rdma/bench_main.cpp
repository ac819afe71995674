// railyard-bench allreduce --transport tcp: a ring allreduce striped over the rails, printed as
// nccl-tests prints all_reduce_perf (so its parsers and railyard-validate read it), then a
// per-rail summary. busbw = algbw * 2(n-1)/n, as nccl-tests computes it for allreduce.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "rdma/launch.h"
#include "rdma/p2p.h"
#include "rdma/rails.h"
#include "rdma/ring.h"
#include "topology/sysfs.h"

namespace r = railyard::rdma;

namespace {

struct Options {
  std::string op, transport = "tcp", rendezvous, rails, json_file, dtype = "float";
  int rank = -1, world = -1, iters = 20, warmup = 5, check = 1, timeout_s = 60;
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

Measure measure(r::TcpRing& ring, size_t count, r::DType type, bool in_place, const Options& o,
                int rank) {
  const size_t bytes = count * r::elem_size(type);
  std::vector<char> send(bytes), recv(bytes);
  char* s = send.data();
  char* d = in_place ? send.data() : recv.data();
  auto init = [&] { fill(s, count, rank, type); };
  Measure m;
  m.rail_seconds.assign(ring.rails() ? ring.rails() : 1, 0.0);
  for (int i = 0; i < o.warmup; ++i) {
    if (!in_place) std::memcpy(d, s, bytes);
    ring.allreduce(d, count, type);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) {
    if (!in_place) std::memcpy(d, s, bytes);
    auto rs = ring.allreduce(d, count, type);
    for (size_t k = 0; k < rs.size(); ++k) m.rail_seconds[k] += rs[k] / o.iters;
  }
  m.us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
         o.iters;
  if (o.check) {
    init();
    if (!in_place) std::memcpy(d, s, bytes);
    ring.allreduce(d, count, type);
    m.wrong = wrong(d, count, ring.world(), type);
  }
  return m;
}

// Per rail and size: 0->1, 1->0, both at once, latency; rank 0 prints (perftest's view of a link).
int run_p2p(const Options& o, const r::Launch& launch, const std::vector<std::string>& rails,
            std::vector<r::Socket> listeners, const r::Table& table) {
  r::TcpPair pair(launch.rank, rails, std::move(listeners), table,
                  std::chrono::seconds(o.timeout_s));
  const bool root = launch.rank == 0;
  if (root) {
    std::printf(
        "# railyard-bench p2p: transport tcp, 2 ranks, %zu rails, iters %d, warmup %d, check %d\n",
        rails.size(), o.iters, o.warmup, o.check);
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
      std::ofstream(o.json_file)
          << nlohmann::json{{"op", "p2p"}, {"rows", rows}, {"wrong", total_wrong}}.dump(2) << "\n";
  }
  return total_wrong ? 1 : 0;
}

int run(const Options& o) {
  const r::Launch launch = r::resolve_launch(
      {o.rank, o.world, o.rendezvous, ""}, [](const std::string& k) -> std::optional<std::string> {
        const char* v = std::getenv(k.c_str());
        if (!v) return std::nullopt;
        return std::string(v);
      });
  if (o.transport != "tcp")
    throw std::invalid_argument("--transport " + o.transport +
                                " is not built in this version (tcp only)");
  const auto parsed = r::parse_dtype(o.dtype);
  if (!parsed) throw std::invalid_argument("-d " + o.dtype + ": float, half, bfloat16 or int32");
  const r::DType type = *parsed;
  const size_t es = r::elem_size(type);
  std::vector<std::string> rails;
  const auto sysfs_root = railyard::topology::sysfs_root_from("");
  for (const auto& e : r::rail_entries(o.rails, std::getenv("NCCL_IB_HCA")))
    rails.push_back(r::resolve_rail(e, sysfs_root));
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
  const auto table = r::exchange_endpoints(launch.rank, launch.world, rv, mine, timeout);
  if (o.op == "p2p") return run_p2p(o, launch, rails, std::move(listeners), table);
  r::TcpRing ring(launch.rank, launch.world, rails, std::move(listeners), table, timeout);

  const bool root = launch.rank == 0;
  const double bus_factor = launch.world > 1 ? 2.0 * (launch.world - 1) / launch.world : 0.0;
  if (root) {
    std::printf("# railyard-bench allreduce: transport tcp, %d ranks, %zu rails (", launch.world,
                rails.size());
    for (size_t k = 0; k < rails.size(); ++k) std::printf("%s%s", k ? ", " : "", rails[k].c_str());
    std::printf("), iters %d, warmup %d, check %d\n#\n", o.iters, o.warmup, o.check);
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
  for (size_t bytes = std::max(parse_size(o.min_bytes), es); bytes <= parse_size(o.max_bytes);
       bytes = std::max(bytes + es, static_cast<size_t>(static_cast<double>(bytes) * o.factor))) {
    const size_t count = bytes / es;
    const Measure oop = measure(ring, count, type, false, o, launch.rank);
    const Measure ip = measure(ring, count, type, true, o, launch.rank);
    const double b = static_cast<double>(count * es);
    auto alg = [&](const Measure& m) { return b / m.us / 1e3; };
    total_wrong += oop.wrong + ip.wrong;
    bw_sum += alg(oop) * bus_factor + alg(ip) * bus_factor;
    bw_n += 2;
    last_rail_seconds = ip.rail_seconds;
    last_bytes = count * es;
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
    for (size_t k = 0; k < rails.size() && k < last_rail_seconds.size(); ++k) {
      const double slice = static_cast<double>(last_bytes) / static_cast<double>(rails.size());
      const double busbw =
          last_rail_seconds[k] > 0 ? slice / last_rail_seconds[k] / 1e9 * bus_factor : 0;
      std::printf("#   rail %zu  %-15s  busbw %8.2f GB/s\n", k, rails[k].c_str(), busbw);
      per_rail.push_back({{"rail", k}, {"address", rails[k]}, {"busbw", busbw}});
    }
    if (!o.json_file.empty()) {
      std::ofstream(o.json_file) << nlohmann::json{{"rows", rows},
                                                   {"avg_busbw", bw_n ? bw_sum / bw_n : 0.0},
                                                   {"out_of_bounds", total_wrong},
                                                   {"rails", per_rail}}
                                        .dump(2)
                                 << "\n";
    }
  }
  return total_wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard-bench: rail bandwidth and ring allreduce"};
  Options o;
  app.add_option("op", o.op, "allreduce, or p2p (per-rail bandwidth and latency between 2 ranks)")
      ->required()
      ->check(CLI::IsMember({"allreduce", "p2p"}));
  app.add_option("--transport", o.transport, "tcp (verbs and nccl: not in this build)");
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
