// railyard-bench: rail bandwidth (p2p), ring allreduce striped over the rails (allreduce), and
// the reduction alone (reduce); flags in options.h, commands in commands.h.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "common/log_escape.h"
#include "rdma/bench/build_info.h"
#include "rdma/bench/commands.h"

using railyard::rdma::bench::Options;

namespace {
std::string version_text() {
  namespace r = railyard::rdma;
  const std::string cuda = *r::kBuiltWithCuda ? std::string("CUDA ") + r::kBuiltWithCuda
                                              : std::string("no CUDA (no GPU memory)");
  const std::string nccl = *r::kBuiltWithNccl ? std::string("NCCL ") + r::kBuiltWithNccl
                                              : std::string("no NCCL (no --transport nccl)");
  return std::string("railyard-bench ") + r::kRailyardVersion + ", built with " + cuda + ", " +
         nccl;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard-bench: rail bandwidth and ring allreduce"};
  Options o;
  app.set_version_flag("--version", version_text());
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
  app.add_option("--streams", o.streams,
                 "tcp: connections per rail and direction (4: measured best on veth rails)")
      ->check(CLI::Range(1, 64));
  app.add_option("--gpu", o.gpu, "GPU for --memory cuda (default: the launcher's local rank)");
  app.add_option(
      "--gpudirect", o.gpudirect,
      "verbs with GPU memory: dmabuf, peermem or staged (default: the first that works)");
  app.add_option("--slots", o.verbs_slots, "verbs: writes in flight per rail and direction")
      ->check(CLI::Range(1, 256));
  app.add_option("--slot-size", o.verbs_slot_size, "verbs: the largest write (1M)");
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
  app.add_option("--token-file", o.token_file,
                 "the ranks' shared secret, proved on every connection (or RAILYARD_TOKEN_FILE)");
  app.add_option("--json", o.json_file, "write results as JSON");
  CLI11_PARSE(app, argc, argv);
  try {
    if (o.op == "reduce") return railyard::rdma::bench::run_reduce(o);
    if (o.op == "p2p") return railyard::rdma::bench::run_p2p(o);
    return railyard::rdma::bench::run_allreduce(o);
  } catch (const std::exception& e) {
    // Peers' words may be in it: escaped, as every log line is.
    std::fprintf(stderr, "railyard-bench: %s\n", railyard::escape_controls(e.what()).c_str());
    return 2;
  }
}
