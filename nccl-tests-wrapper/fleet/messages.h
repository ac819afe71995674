// The fleet's control messages as values, each field checked before anything is done with it:
// a hello from a joining rank (read by rank 0, which trusts nobody yet), rank 0's orders (read by
// every rank) and the answers that rank 0 indexes by rail. A message of the wrong shape throws
// rdma::NetError saying which field, so the caller drops that connection or that rank instead of
// indexing past a short list or printing a name no kubectl command could take.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rdma/run/bootstrap.h"

namespace railyard::validate {

struct Hello {
  int rank = -1;
  std::string node;                // an RFC 1123 name: it ends up in node patches and kubectl lines
  std::vector<std::string> rails;  // each rail's IPv4 address
  std::vector<std::string> macs;   // each rail NIC's MAC, or none
  // Its node's rail firmware as checks/firmware.h writes it ("" where unreadable), in its own
  // rail order; none where it could not read its node.
  std::vector<std::string> firmware;
};
Hello parse_hello(const nlohmann::json& m, int world, size_t rails, const std::string& from);

struct PairOrder {
  int role = 0;  // 0 or 1
  std::vector<rdma::Endpoint> peer;
  std::string name;
};
PairOrder parse_pair(const nlohmann::json& m, size_t rails, const std::string& from);

struct RingOrder {
  int index = 0;
  rdma::Table table;
  std::vector<std::string> names;
};
RingOrder parse_ring(const nlohmann::json& m, size_t rails, const std::string& from);

struct ProbeOrder {
  size_t rail = 0;
  std::vector<std::string> targets;  // IPv4 addresses
  int wait_ms = 500;
};
ProbeOrder parse_probe(const nlohmann::json& m, size_t rails, const std::string& from);

// A listen answer: one port per rail.
std::vector<int> parse_ports(const nlohmann::json& m, size_t rails, const std::string& from);

}  // namespace railyard::validate
