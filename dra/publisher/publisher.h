// Publishes this node's pool of ResourceSlices through the API server: creates or updates the
// slices named <node>-railyard.io-<n>, deletes the pool's slices it no longer needs, and owns
// them by the Node so that they go when the Node goes. dra/README.md says how it is run.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kube/api_client.h"

namespace railyard::dra {

inline constexpr const char* kSlicesPath = "/apis/resource.k8s.io/v1/resourceslices";

// The pool's slices on the API server: driver railyard.io, spec.nodeName = node.
std::string pool_list_path(const std::string& node);

// `slice` with metadata.ownerReferences naming the Node (controller: its slices go with it).
nlohmann::json with_owner(nlohmann::json slice, const std::string& node, const std::string& uid);

class Publisher {
 public:
  Publisher(kube::ApiClient& api, std::string node) : api_(api), node_(std::move(node)) {}

  // GET the Node for its uid, and the pool's current slices for their highest generation, so
  // that a restarted driver publishes above it. Throws kube::ApiError.
  void connect();
  bool connected() const { return !node_uid_.empty(); }
  int64_t last_generation() const { return generation_; }

  // Sends `slices` (from build_slices, their generation set by the caller) as the pool:
  // each created or replaced (PUT with the resourceVersion it read; a conflict is read again
  // once), then the pool's other slices deleted. Throws kube::ApiError; a later call starts over.
  void publish(const std::vector<nlohmann::json>& slices);
  // Devices the last publish sent with taints that the API server stored without them (device
  // taints not enabled there).
  size_t taints_dropped() const { return taints_dropped_; }
  // Whether the API server still holds the pool as last published: the same slice names, each at
  // the generation published (a slice deleted or changed by someone else is not), and the Node
  // the same object (a Node deleted and registered again has a new uid: the garbage collector
  // deletes slices owned by the old one, so they are published again owned by the new). Throws
  // kube::ApiError.
  bool in_sync();
  const std::string& node_uid() const { return node_uid_; }
  // Deletes every slice of the pool (a driver leaving the node). Returns how many.
  size_t remove_all();

 private:
  std::vector<nlohmann::json> list_pool();
  std::string read_node_uid();
  kube::ApiClient& api_;
  std::string node_;
  std::string node_uid_;
  int64_t generation_ = 0;
  size_t taints_dropped_ = 0;
  std::vector<nlohmann::json> sent_;  // the slices last published, as sent
};

}  // namespace railyard::dra
