#include "rdma/run/launch.h"

namespace railyard::rdma {

Launch resolve_launch(const Launch& flags,
                      const std::function<std::optional<std::string>(const std::string&)>& getenv) {
  Launch l = flags;
  auto num = [&](const char* var) -> std::optional<int> {
    auto v = getenv(var);
    if (!v) return std::nullopt;
    try {
      return std::stoi(*v);
    } catch (const std::exception&) {
      throw NetError(std::string(var) + "='" + *v + "' is not a number");
    }
  };
  if (l.rank >= 0) l.source = "flags";
  for (const auto& [rank_var, size_var] :
       {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        std::pair{"JOB_COMPLETION_INDEX", ""}, std::pair{"RANK", "WORLD_SIZE"}}) {
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
