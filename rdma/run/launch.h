// Who am I in the job: rank, world size and rendezvous from flags, or from the environment of
// mpirun (OMPI_COMM_WORLD_RANK/SIZE), a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) or torchrun
// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Flags win.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "rdma/transport/socket.h"

namespace railyard::rdma {

struct Launch {
  int rank = -1, world = -1;
  std::string rendezvous;  // HOST:PORT
  std::string source;      // which of the above supplied the rank, for messages
};

using Getenv = std::function<std::optional<std::string>(const std::string&)>;

// Throws NetError naming what is missing.
Launch resolve_launch(const Launch& flags, const Getenv& getenv);

// The rank a launcher gave this process, from the same variables in the same order; none when
// no launcher did. Throws NetError for a variable that is not a number.
std::optional<int> launcher_rank(const Getenv& getenv);

}  // namespace railyard::rdma
