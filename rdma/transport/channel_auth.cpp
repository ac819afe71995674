#include "rdma/transport/channel_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

namespace railyard::rdma {
namespace {

constexpr std::string_view kMagic = "RYv1";  // the protocol, before the acceptor's challenge
constexpr size_t kNonceBytes = 32, kMacBytes = 32;
constexpr std::string_view kConnectorLabel = "railyard-v1 connector";
constexpr std::string_view kAcceptorLabel = "railyard-v1 acceptor";

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw NetError("no random bytes for a challenge (OpenSSL's RAND_bytes failed)");
  return out;
}

std::string recv_bytes(const Socket& s, size_t n, const std::string& peer,
                       std::chrono::steady_clock::time_point deadline) {
  std::string out(n, '\0');
  const auto budget =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  s.recv_all_until(out.data(), n, peer, deadline, budget);
  return out;
}

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string refused(const ChannelKey& key, const std::string& peer) {
  return key.configured() ? peer +
                                " did not prove the shared token (a stranger, or a rank with "
                                "another --token-file)"
                          : peer +
                                " does not speak railyard's control protocol, or has a "
                                "--token-file where this rank has none";
}

}  // namespace

ChannelKey ChannelKey::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NetError("--token-file " + path + " cannot be read");
  std::string text(4097, '\0');
  in.read(text.data(), 4097);
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > 4096) throw NetError("--token-file " + path + " is larger than 4 KiB");
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.size() < 16)
    throw NetError("--token-file " + path + " holds " + std::to_string(text.size()) +
                   " bytes: a token has at least 16");
  ChannelKey k;
  k.key_ = std::move(text);
  return k;
}

ChannelKey ChannelKey::resolve(const std::string& flag) {
  if (!flag.empty()) return from_file(flag);
  if (const char* env = std::getenv("RAILYARD_TOKEN_FILE"); env && *env) return from_file(env);
  return {};
}

std::string ChannelKey::mac(std::string_view label, std::string_view context, std::string_view a,
                            std::string_view b) const {
  std::string msg;
  msg.reserve(label.size() + context.size() + a.size() + b.size() + 2);
  msg.append(label).append(1, '\0').append(context).append(1, '\0').append(a).append(b);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  static const unsigned char empty = 0;
  const unsigned char* k =
      key_.empty() ? &empty : reinterpret_cast<const unsigned char*>(key_.data());
  if (!HMAC(EVP_sha256(), k, static_cast<int>(key_.size()),
            reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out, &len))
    throw NetError("HMAC-SHA256 failed");
  return std::string(reinterpret_cast<const char*>(out), len);
}

void warn_if_unauthenticated(const ChannelKey& key, const std::string& tool) {
  static std::once_flag once;
  if (key.configured()) return;
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "%s: warning: no --token-file (or RAILYARD_TOKEN_FILE): the ranks do not "
                 "authenticate each other; anyone who can reach the rendezvous or a rail port "
                 "can join. Give every rank the same secret outside a lab.\n",
                 tool.c_str());
  });
}

Offer offer_challenge(const Socket& s, const std::string& peer) {
  Offer o{random_bytes(kNonceBytes)};
  const std::string hello = std::string(kMagic) + o.nonce;
  s.send_all(hello.data(), hello.size(), peer);
  return o;
}

void check_answer(const Socket& s, const ChannelKey& key, std::string_view context,
                  const Offer& offer, const std::string& peer,
                  std::chrono::steady_clock::time_point deadline) {
  const std::string got = recv_bytes(s, kNonceBytes + kMacBytes, peer, deadline);
  const std::string nonce = got.substr(0, kNonceBytes);
  if (!same(got.substr(kNonceBytes), key.mac(kConnectorLabel, context, offer.nonce, nonce)))
    throw AuthError(refused(key, peer));
  const std::string proof = key.mac(kAcceptorLabel, context, offer.nonce, nonce);
  s.send_all(proof.data(), proof.size(), peer);
}

Answer answer_challenge(const Socket& s, const ChannelKey& key, std::string_view context,
                        const std::string& peer, std::chrono::steady_clock::time_point deadline) {
  const std::string hello = recv_bytes(s, kMagic.size() + kNonceBytes, peer, deadline);
  if (hello.compare(0, kMagic.size(), kMagic) != 0)
    throw AuthError(peer + " does not speak railyard's control protocol v1");
  Answer a{hello.substr(kMagic.size()), random_bytes(kNonceBytes)};
  const std::string reply = a.nonce + key.mac(kConnectorLabel, context, a.offered, a.nonce);
  s.send_all(reply.data(), reply.size(), peer);
  return a;
}

void check_proof(const Socket& s, const ChannelKey& key, std::string_view context,
                 const Answer& answer, const std::string& peer,
                 std::chrono::steady_clock::time_point deadline) {
  const std::string got = recv_bytes(s, kMacBytes, peer, deadline);
  if (!same(got, key.mac(kAcceptorLabel, context, answer.offered, answer.nonce)))
    throw AuthError(refused(key, peer));
}

void prove_as_acceptor(const Socket& s, const ChannelKey& key, std::string_view context,
                       const std::string& peer, std::chrono::steady_clock::time_point deadline) {
  check_answer(s, key, context, offer_challenge(s, peer), peer, deadline);
}

void prove_as_connector(const Socket& s, const ChannelKey& key, std::string_view context,
                        const std::string& peer, std::chrono::steady_clock::time_point deadline) {
  const Answer a = answer_challenge(s, key, context, peer, deadline);
  try {
    check_proof(s, key, context, a, peer, deadline);
  } catch (const AuthError&) {
    throw;
  } catch (const NetError& e) {
    // An acceptor that finds our answer wrong says nothing more: it hangs up.
    throw AuthError(std::string(e.what()) + " at the token check: does it have the same " +
                    "--token-file as this rank?");
  }
}

}  // namespace railyard::rdma
