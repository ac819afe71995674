// railyard-bench's flags, and what every command shares: sizes, the values each rank fills in
// and checks, the launcher's environment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rdma/memory/reduce.h"

namespace railyard::rdma::bench {

struct Options {
  std::string op, transport = "tcp", rendezvous, rails, json_file, dtype = "float";
  std::string memory = "host", gpudirect, plot_file;
  bool hugepages = false;
  int rank = -1, world = -1, iters = 20, warmup = 5, check = 1, timeout_s = 60;
  int gpu = -1, gid_index = -1, streams = 4;
  int verbs_slots = 8;                 // writes in flight per direction and rail
  std::string verbs_slot_size = "1M";  // the largest write
  std::string min_bytes = "8", max_bytes = "64M";
  std::string token_file;  // the ranks' shared secret (channel_auth.h); else RAILYARD_TOKEN_FILE
  double factor = 2;
};

// "8", "64K", "16M", "1G" (powers of 1024). Throws std::invalid_argument.
size_t parse_size(const std::string& s);
// -b .. -e by -f, each a whole number of `granule`s (at least one), as nccl-tests steps.
std::vector<size_t> sizes(const Options& o, size_t granule);

// Element i of rank r, and the count of elements that are not the sum over `world` ranks.
void fill(void* p, size_t n, int rank, DType t);
size_t wrong(const void* p, size_t n, int world, DType t);

// --json and --plot: written whole (a temporary file renamed over the path), or an error that
// names the flag; an empty path writes nothing.
void write_output(const std::string& path, const std::string& text, const char* flag);

std::optional<std::string> env(const std::string& name);
// The GPU of this rank: --gpu, else the launcher's local rank, as one rank per GPU runs.
int pick_gpu(const Options& o);

}  // namespace railyard::rdma::bench
