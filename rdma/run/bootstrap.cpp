#include "rdma/run/bootstrap.h"

#include <cstdint>
#include <set>
#include <sstream>

namespace railyard::rdma {
namespace {

void send_text(const Socket& s, const std::string& text, const std::string& peer) {
  const uint32_t n = static_cast<uint32_t>(text.size());
  s.send_all(&n, sizeof n, peer);
  s.send_all(text.data(), n, peer);
}

std::string recv_text(const Socket& s, const std::string& peer, std::chrono::milliseconds timeout) {
  uint32_t n = 0;
  s.recv_all(&n, sizeof n, peer, timeout);
  if (n > (1u << 20))
    throw NetError(peer + " sent a bootstrap message of " + std::to_string(n) + " bytes");
  std::string text(n, '\0');
  s.recv_all(text.data(), n, peer, timeout);
  return text;
}

// "R N host:port host:port ..." per line
std::string encode(int rank, int world, const std::vector<Endpoint>& eps) {
  std::string s = std::to_string(rank) + " " + std::to_string(world);
  for (const auto& e : eps) s += " " + e.to_string();
  return s;
}

}  // namespace

Table exchange_endpoints(int rank, int world, const Endpoint& rendezvous,
                         const std::vector<Endpoint>& mine, std::chrono::milliseconds timeout) {
  Table table(static_cast<size_t>(world));
  table[static_cast<size_t>(rank)] = mine;
  if (world == 1) return table;
  if (rank != 0) {
    Socket s = Socket::connect_to(rendezvous, "", timeout);
    send_text(s, encode(rank, world, mine), "rank 0 (rendezvous " + rendezvous.to_string() + ")");
    std::istringstream all(
        recv_text(s, "rank 0 (rendezvous " + rendezvous.to_string() + ")", timeout));
    for (std::string line; std::getline(all, line);) {
      std::istringstream in(line);
      int r = -1, w = 0;
      in >> r >> w;
      if (r < 0 || r >= world) throw NetError("bad bootstrap table from rank 0");
      table[static_cast<size_t>(r)].clear();
      for (std::string ep; in >> ep;) table[static_cast<size_t>(r)].push_back(Endpoint::parse(ep));
    }
    return table;
  }
  Socket server = Socket::listen_on("", rendezvous.port);
  std::vector<Socket> peers;
  std::set<int> missing;
  for (int r = 1; r < world; ++r) missing.insert(r);
  while (!missing.empty()) {
    std::string names;
    for (int r : missing) names += (names.empty() ? "rank " : ", ") + std::to_string(r);
    Socket s =
        server.accept_one(timeout, names + " to join (world size " + std::to_string(world) + ")");
    std::istringstream in(recv_text(s, "a joining rank", timeout));
    int r = -1, w = 0;
    in >> r >> w;
    if (w != world)
      throw NetError("rank " + std::to_string(r) + " says the world size is " + std::to_string(w));
    if (!missing.erase(r))
      throw NetError("rank " + std::to_string(r) + " joined twice or is out of range");
    for (std::string ep; in >> ep;) table[static_cast<size_t>(r)].push_back(Endpoint::parse(ep));
    if (table[static_cast<size_t>(r)].size() != mine.size())
      throw NetError("rank " + std::to_string(r) + " has " +
                     std::to_string(table[static_cast<size_t>(r)].size()) + " rails, rank 0 has " +
                     std::to_string(mine.size()));
    peers.push_back(std::move(s));
  }
  std::string all;
  for (int r = 0; r < world; ++r) all += encode(r, world, table[static_cast<size_t>(r)]) + "\n";
  for (const auto& p : peers) send_text(p, all, "a joined rank");
  return table;
}

}  // namespace railyard::rdma

namespace railyard::rdma {

RingSockets connect_ring(int rank, int world, const std::vector<std::string>& rail_addresses,
                         std::vector<Socket>& listeners, const Table& table,
                         std::chrono::milliseconds timeout, int streams, const PeerLabel& label) {
  RingSockets r;
  if (world == 1) return r;
  const int next = (rank + 1) % world, prev = (rank + world - 1) % world;
  for (size_t k = 0; k < rail_addresses.size(); ++k) {
    auto name = [&](int peer) {
      return label ? label(peer, k)
                   : "rank " + std::to_string(peer) + " (rail " + std::to_string(k) + ")";
    };
    r.next_names.push_back(name(next));
    r.prev_names.push_back(name(prev));
    r.next.emplace_back();
    r.prev.emplace_back();
    // Connect, then accept, one at a time: connections from one peer are accepted in the order
    // it made them, so connection j pairs with connection j.
    for (int j = 0; j < streams; ++j) {
      r.next[k].push_back(Socket::connect_to(table[static_cast<size_t>(next)][k], rail_addresses[k],
                                             timeout, r.next_names.back()));
      r.prev[k].push_back(listeners[k].accept_one(timeout, r.prev_names.back()));
    }
  }
  return r;
}

}  // namespace railyard::rdma

namespace railyard::rdma {

std::string ring_broadcast(int rank, int world, const RingSockets& ring, const std::string& bytes,
                           size_t size, std::chrono::milliseconds timeout) {
  if (world == 1) return bytes;
  std::string v = rank == 0 ? bytes : std::string(size, '\0');
  if (v.size() != size) throw NetError("ring_broadcast: rank 0 has the wrong size");
  if (rank != 0) ring.prev[0][0].recv_all(v.data(), size, ring.prev_names[0], timeout);
  if ((rank + 1) % world != 0) ring.next[0][0].send_all(v.data(), size, ring.next_names[0]);
  return v;
}

}  // namespace railyard::rdma
