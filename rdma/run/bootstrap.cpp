#include "rdma/run/bootstrap.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>

#include "common/log_escape.h"
#include "rdma/run/rendezvous_lines.h"
#include "rdma/transport/admission.h"
#include "rdma/transport/frame.h"

namespace railyard::rdma {
namespace {

using Clock = std::chrono::steady_clock;

// A joining rank's message: small; the table rank 0 sends back: one line per rank.
constexpr size_t kJoinBytes = 64 * 1024;
constexpr size_t kTableBytes = 1 << 20;

std::chrono::milliseconds left(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

// A connection that is not the awaited rank is told apart and dropped: the run goes on.
void dropped(const std::string& what) {
  std::fprintf(stderr, "railyard: %s\n", escape_controls(what).c_str());
}

}  // namespace

Table exchange_endpoints(int rank, int world, const Endpoint& rendezvous,
                         const std::vector<Endpoint>& mine, std::chrono::milliseconds timeout,
                         const ChannelKey& key) {
  Table table(static_cast<size_t>(world));
  table[static_cast<size_t>(rank)] = mine;
  if (world == 1) return table;
  if (rank != 0) {
    const std::string zero = "rank 0 (rendezvous " + rendezvous.to_string() + ")";
    Socket s = Socket::connect_to(rendezvous, "", timeout);
    prove_as_connector(s, key, "rendezvous", zero, Clock::now() + timeout);
    send_frame(s, encode_join(rank, world, mine), zero);
    // Rank 0 answers once every rank has joined.
    return decode_table(recv_frame(s, zero, timeout, kTableBytes), world, mine.size(), zero);
  }
  Socket server = Socket::listen_on("", rendezvous.port);
  std::set<int> awaited;
  for (int r = 1; r < world; ++r) awaited.insert(r);
  const Admit admit = [&](const Socket& s, const std::string& from, Clock::time_point by) {
    prove_as_acceptor(s, key, "rendezvous", from, by);
    const auto wait = std::max(std::chrono::milliseconds(1), left(by));
    const JoinLine l = decode_join(recv_frame(s, from, wait, kJoinBytes), world, mine.size(), from);
    Joiner j;
    j.rank = l.rank;
    j.hello = encode_join(l.rank, world, l.eps);
    return j;
  };
  const DoorOptions door{timeout, "to join (world size " + std::to_string(world) + ")",
                         [](const std::string& why) { dropped("rendezvous: dropped " + why); }};
  std::vector<Socket> peers;
  admit_ranks(server, awaited, admit, door, [&](Joiner j) {
    table[static_cast<size_t>(j.rank)] =
        decode_join(j.hello, world, mine.size(), "rank " + std::to_string(j.rank)).eps;
    peers.push_back(std::move(j.socket));
  });
  std::string all;
  for (int r = 0; r < world; ++r)
    all += encode_join(r, world, table[static_cast<size_t>(r)]) + "\n";
  for (const auto& p : peers) send_frame(p, all, "a joined rank");
  return table;
}

}  // namespace railyard::rdma

namespace railyard::rdma {

RingSockets connect_ring(int rank, int world, const std::vector<std::string>& rail_addresses,
                         std::vector<Socket>& listeners, const Table& table,
                         std::chrono::milliseconds timeout, const ChannelKey& key, int streams,
                         const PeerLabel& label) {
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
    const std::string context = "rail " + std::to_string(k);
    // Connect, then accept, one at a time: connections from one peer are accepted in the order
    // it made them, so connection j pairs with connection j. Each is proved both ways, in an
    // order that never waits on a neighbour that waits on us: the TCP connection to the next
    // rank (its kernel completes it unasked), the previous rank's accepted and challenged, the
    // next rank's challenge answered (it sent one once it accepted ours), the previous rank's
    // answer checked, the next rank's proof read. What reaches the listener from another
    // address, or fails the proof, is dropped and the listener asked again, until the timeout.
    for (int j = 0; j < streams; ++j) {
      const auto deadline = Clock::now() + timeout;
      r.next[k].push_back(Socket::connect_to(table[static_cast<size_t>(next)][k], rail_addresses[k],
                                             timeout, r.next_names.back()));
      const Socket& to_next = r.next[k].back();
      const Endpoint& expected = table[static_cast<size_t>(prev)][k];
      Answer ours;  // to the next rank's challenge, answered once
      Socket from_prev;
      std::string last_drop;  // told with the timeout: the peer may be there with a wrong token
      auto drop = [&](const std::string& why) {
        last_drop = why;
        dropped("rail: dropped " + why);
      };
      for (;;) {
        Socket s;
        try {
          s = listeners[k].accept_one(std::max(left(deadline), std::chrono::milliseconds(1)),
                                      r.prev_names.back());
        } catch (const NetError& e) {
          if (last_drop.empty()) throw;
          throw NetError(std::string(e.what()) + "; dropped meanwhile: " + last_drop);
        }
        const std::string host = s.peer_host();
        const std::string from =
            "a connection from " + host + " (waiting for " + r.prev_names.back() + ")";
        if (host != expected.host) {
          drop(from + ": not " + r.prev_names.back() + "'s address " + expected.host);
          continue;
        }
        Offer offer;
        try {
          offer = offer_challenge(s, from);
        } catch (const NetError& e) {
          drop(e.what());
          continue;
        }
        if (ours.offered.empty())
          ours = answer_challenge(to_next, key, context, r.next_names.back(), deadline);
        try {
          check_answer(s, key, context, offer, from,
                       std::min(deadline, Clock::now() + kHandshakeLimit));
        } catch (const NetError& e) {
          drop(e.what());
          continue;
        }
        from_prev = std::move(s);
        break;
      }
      check_proof(to_next, key, context, ours, r.next_names.back(), deadline);
      r.prev[k].push_back(std::move(from_prev));
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
