#include "rdma/run/launch.h"

#include <utility>

namespace railyard::rdma {

namespace {

// The launchers' (rank, size) variables, in the order they are believed: mpirun, an Indexed Job
// (its size comes from WORLD_SIZE), torchrun.
constexpr std::pair<const char*, const char*> kRankVars[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"JOB_COMPLETION_INDEX", ""},
    {"RANK", "WORLD_SIZE"}};

std::optional<int> env_number(const Getenv& getenv, const char* var) {
  auto v = getenv(var);
  if (!v) return std::nullopt;
  try {
    return std::stoi(*v);
  } catch (const std::exception&) {
    throw NetError(std::string(var) + "='" + *v + "' is not a number");
  }
}

}  // namespace

std::optional<int> launcher_rank(const Getenv& getenv) {
  for (const auto& [rank_var, size_var] : kRankVars)
    if (auto r = env_number(getenv, rank_var)) return r;
  return std::nullopt;
}

Launch resolve_launch(const Launch& flags, const Getenv& getenv) {
  Launch l = flags;
  auto num = [&](const char* var) { return env_number(getenv, var); };
  if (l.rank >= 0) l.source = "flags";
  for (const auto& [rank_var, size_var] : kRankVars) {
    if (l.rank >= 0) break;
    if (auto r = num(rank_var)) {
      l.rank = *r;
      l.source = rank_var;
      if (l.world < 0 && *size_var) l.world = num(size_var).value_or(-1);
    }
  }
  if (l.world < 0) l.world = num("WORLD_SIZE").value_or(num("OMPI_COMM_WORLD_SIZE").value_or(-1));
  if (l.rendezvous.empty()) {
    auto addr = getenv("MASTER_ADDR");
    auto port = getenv("MASTER_PORT");
    if (addr && port) l.rendezvous = *addr + ":" + *port;
  }
  if (l.rank < 0)
    throw NetError("no rank: pass --rank, or run under mpirun, an Indexed Job or torchrun");
  if (l.world < 1) throw NetError("no world size: pass --world-size (or WORLD_SIZE)");
  if (l.rank >= l.world)
    throw NetError("rank " + std::to_string(l.rank) + " is not below the world size " +
                   std::to_string(l.world));
  if (l.rendezvous.empty() && l.world > 1)
    throw NetError("no rendezvous: pass --rendezvous HOST:PORT (or MASTER_ADDR/MASTER_PORT)");
  return l;
}

}  // namespace railyard::rdma
