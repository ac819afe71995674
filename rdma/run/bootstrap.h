// Rendezvous: rank 0 serves at HOST:PORT, every rank registers the endpoints it listens on (one
// per rail), and everyone gets the whole table. A rank that never comes is named in the error.
// Every connection proves the shared token (channel_auth.h) and every message's shape is
// checked: a stranger, junk, silence or a second claim to a rank is dropped with a line on stderr
// and the run goes on waiting for the real rank within the timeout.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "rdma/run/rendezvous_lines.h"
#include "rdma/transport/channel_auth.h"
#include "rdma/transport/socket.h"

namespace railyard::rdma {

Table exchange_endpoints(int rank, int world, const Endpoint& rendezvous,
                         const std::vector<Endpoint>& mine, std::chrono::milliseconds timeout,
                         const ChannelKey& key);

// Each rail's connections to the ring neighbours: next[k][j], connection j from this rank's rail
// k address to the next rank's rail k listener, and prev[k][j], accepted from the previous rank;
// `streams` of each per rail. Every transport starts here: TCP carries the data over them, verbs
// its queue pair handshake (over the first).
struct RingSockets {
  std::vector<std::vector<Socket>> next, prev;
  std::vector<std::string> next_names, prev_names;  // "rank 2 (rail 1)", for errors
};
// How errors name the neighbour at ring position `rank` on rail `rail`: "rank 2 (rail 1)" unless
// the caller knows better (a fleet's pair or ring is a small ring of its own, whose positions
// and rails are not the fleet's ranks and rails).
using PeerLabel = std::function<std::string(int rank, size_t rail)>;
// A connection to a rail listener must come from the previous rank's rail address (the
// table's) and prove the token; anything else is dropped and the listener asked again.
RingSockets connect_ring(int rank, int world, const std::vector<std::string>& rail_addresses,
                         std::vector<Socket>& listeners, const Table& table,
                         std::chrono::milliseconds timeout, const ChannelKey& key, int streams = 1,
                         const PeerLabel& label = {});

// Rank 0's `bytes` to every rank, hop by hop around rail 0 (NCCL's unique id, say).
std::string ring_broadcast(int rank, int world, const RingSockets& ring, const std::string& bytes,
                           size_t size, std::chrono::milliseconds timeout);

}  // namespace railyard::rdma
