#include "rdma/run/rendezvous_lines.h"

#include <sstream>

namespace railyard::rdma {

std::string encode_join(int rank, int world, const std::vector<Endpoint>& eps) {
  std::string s = std::to_string(rank) + " " + std::to_string(world);
  for (const auto& e : eps) s += " " + e.to_string();
  return s;
}

JoinLine decode_join(const std::string& line, int world, size_t rails, const std::string& from) {
  std::istringstream in(line);
  JoinLine l;
  int their_world = -1;
  if (!(in >> l.rank >> their_world)) throw NetError(from + " sent no rank and world size");
  if (their_world != world)
    throw NetError(from + " says the world size is " + std::to_string(their_world) + ", not " +
                   std::to_string(world));
  if (l.rank < 0 || l.rank >= world)
    throw NetError(from + " claims rank " + std::to_string(l.rank) + ", out of range");
  for (std::string ep; in >> ep;) {
    if (l.eps.size() == rails)
      throw NetError(from + " has more than " + std::to_string(rails) + " rails");
    l.eps.push_back(Endpoint::parse(ep));
  }
  if (l.eps.size() != rails)
    throw NetError("rank " + std::to_string(l.rank) + " has " + std::to_string(l.eps.size()) +
                   " rails, this rank has " + std::to_string(rails));
  return l;
}

Table decode_table(const std::string& text, int world, size_t rails, const std::string& from) {
  Table table(static_cast<size_t>(world));
  std::vector<bool> seen(static_cast<size_t>(world));
  std::istringstream all(text);
  for (std::string line; std::getline(all, line);) {
    JoinLine l = decode_join(line, world, rails, from);
    if (seen[static_cast<size_t>(l.rank)])
      throw NetError(from + " sent rank " + std::to_string(l.rank) + " twice");
    seen[static_cast<size_t>(l.rank)] = true;
    table[static_cast<size_t>(l.rank)] = std::move(l.eps);
  }
  for (int r = 0; r < world; ++r)
    if (!seen[static_cast<size_t>(r)])
      throw NetError(from + " sent a table without rank " + std::to_string(r));
  return table;
}

}  // namespace railyard::rdma
