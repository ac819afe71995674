// Rendezvous: rank 0 serves at HOST:PORT, every rank registers the endpoints it listens on (one
// per rail), and everyone gets the whole table. A rank that never comes is named in the error.
#pragma once

#include <chrono>
#include <vector>

#include "rdma/socket.h"

namespace railyard::rdma {

using Table = std::vector<std::vector<Endpoint>>;  // [rank][rail]

Table exchange_endpoints(int rank, int world, const Endpoint& rendezvous,
                         const std::vector<Endpoint>& mine, std::chrono::milliseconds timeout);

}  // namespace railyard::rdma
