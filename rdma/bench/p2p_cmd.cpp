#include <cstdio>
#include <nlohmann/json.hpp>

#include "rdma/bench/commands.h"
#include "rdma/bench/job.h"
#include "rdma/run/p2p.h"

namespace railyard::rdma::bench {

// Per rail and size: 0->1, 1->0, both at once, latency; rank 0 prints (perftest's view of a link).
int run_p2p(const Options& o) {
  Job job = start_job(o);
  const Memory& memory = *job.memory;
  const Launch& launch = job.launch;
  const std::vector<std::string>& rails = job.addresses;
  LinkPair pair(launch.rank, make_links(o, job), *job.memory, parse_size(o.max_bytes));
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
  std::vector<P2pResult> largest(rails.size());
  for (size_t k = 0; k < rails.size(); ++k) {
    for (const size_t bytes : sizes(o, 1)) {
      const P2pResult m = pair.measure(k, bytes, o.iters, o.warmup, o.check != 0);
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
    write_output(o.json_file,
                 nlohmann::json{{"op", "p2p"},
                                {"transport", o.transport},
                                {"memory", memory.describe()},
                                {"rows", rows},
                                {"wrong", total_wrong}}
                         .dump(2) +
                     "\n",
                 "--json");
  }
  return total_wrong ? 1 : 0;
}

}  // namespace railyard::rdma::bench
