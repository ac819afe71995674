// The rendezvous's text: a joining rank sends one line, "RANK WORLD host:port host:port ...",
// one endpoint per rail; rank 0 answers with one such line per rank. Both come from the
// network, so every field is checked here and a bad one is a NetError naming the sender.
#pragma once

#include <string>
#include <vector>

#include "rdma/transport/socket.h"

namespace railyard::rdma {

using Table = std::vector<std::vector<Endpoint>>;  // [rank][rail]

struct JoinLine {
  int rank = -1;
  std::vector<Endpoint> eps;
};

std::string encode_join(int rank, int world, const std::vector<Endpoint>& eps);

// One line: a rank in [0, world), this world size, exactly `rails` endpoints.
JoinLine decode_join(const std::string& line, int world, size_t rails, const std::string& from);

// Rank 0's whole table: every rank once, each line as decode_join checks it.
Table decode_table(const std::string& text, int world, size_t rails, const std::string& from);

}  // namespace railyard::rdma
