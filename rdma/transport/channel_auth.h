// Who is on the other end of a control or rail connection. railyard-bench's and
// railyard-validate fleet's ranks share a secret (--token-file FILE or RAILYARD_TOKEN_FILE; the
// Jobs mount it from a Secret made per run) and prove it to each other on every connection: the
// accepting side sends a random challenge, the connecting side answers with its own and an
// HMAC-SHA256 over both, and the accepting side proves itself back the same way. The secret never
// crosses the wire, and an answer cannot be replayed on another connection or for another purpose
// (the context: "rendezvous", "rail 3").
//
// Without a secret (a lab) the same exchange runs with an empty key: it proves nothing about the
// peer, but a stranger that does not speak the protocol (junk, a port scanner, a silent socket)
// is still told apart from a rank and dropped instead of ending the run.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "rdma/transport/socket.h"

namespace railyard::rdma {

class AuthError : public NetError {
 public:
  using NetError::NetError;
};

class ChannelKey {
 public:
  ChannelKey() = default;  // none: a lab
  // The file's text without its trailing newline; at least 16 bytes. Throws NetError.
  static ChannelKey from_file(const std::string& path);
  // `flag` (--token-file) when set, else RAILYARD_TOKEN_FILE, else none.
  static ChannelKey resolve(const std::string& flag);
  bool configured() const { return !key_.empty(); }
  std::string mac(std::string_view label, std::string_view context, std::string_view a,
                  std::string_view b) const;

 private:
  std::string key_;
};

// Once per process, on stderr: "no --token-file: ... anyone who can reach ... can join".
void warn_if_unauthenticated(const ChannelKey& key, const std::string& tool);

// The two sides, each in two steps, so that a ring (where every rank accepts from one neighbour
// while it connects to the other) can interleave them without waiting on itself: accept, offer;
// answer the next's offer; check the previous's answer; check the next's proof.
struct Offer {
  std::string nonce;
};
Offer offer_challenge(const Socket& s, const std::string& peer);
// Reads the connector's answer by `deadline`; throws AuthError (a wrong proof) or NetError (junk
// that is no answer, silence, a closed connection). Sends this side's proof when it is right.
void check_answer(const Socket& s, const ChannelKey& key, std::string_view context,
                  const Offer& offer, const std::string& peer,
                  std::chrono::steady_clock::time_point deadline);

struct Answer {
  std::string offered, nonce;
};
Answer answer_challenge(const Socket& s, const ChannelKey& key, std::string_view context,
                        const std::string& peer, std::chrono::steady_clock::time_point deadline);
void check_proof(const Socket& s, const ChannelKey& key, std::string_view context,
                 const Answer& answer, const std::string& peer,
                 std::chrono::steady_clock::time_point deadline);

// Both steps of one side, for a connection on its own (the rendezvous).
void prove_as_acceptor(const Socket& s, const ChannelKey& key, std::string_view context,
                       const std::string& peer, std::chrono::steady_clock::time_point deadline);
void prove_as_connector(const Socket& s, const ChannelKey& key, std::string_view context,
                        const std::string& peer, std::chrono::steady_clock::time_point deadline);

// How long one stranger may hold an acceptor that serves them one at a time: a real peer
// answers in milliseconds.
inline constexpr std::chrono::seconds kHandshakeLimit{10};

}  // namespace railyard::rdma
