// Events on the Node when its devices turn unhealthy and when they recover. The scheduler tells a
// Pending pod only "cannot allocate all claims"; `kubectl describe node` and `kubectl get events`
// then say which devices are tainted, with what, and why (DESIGN.md asks for exactly this).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "dra/slices/slices.h"
#include "kube/api_client.h"

namespace railyard::dra {

class NodeEvents {
 public:
  // `what`: what the driver does to an unhealthy device, for the message. The Events are created
  // in `default`: the API server keeps a cluster-scoped object's Events there (as the kubelet's).
  NodeEvents(kube::ApiClient& api, std::string node, std::string what)
      : api_(api), node_(std::move(node)), what_(std::move(what)) {}

  // Compares `devices` with the last call and creates one Event per fault that appeared
  // (Warning, reason RailDown) or went (Normal, reason RailUp), naming its devices. A failed
  // create is logged and not retried: an Event is a courtesy, the slices are the truth.
  void update(const std::vector<Device>& devices, const std::string& node_uid,
              const std::string& now);

  // The Event object (core v1), for tests.
  nlohmann::json event(const std::string& type, const std::string& reason,
                       const std::string& message, const std::string& node_uid,
                       const std::string& now) const;

 private:
  kube::ApiClient& api_;
  std::string node_, what_;
  std::map<std::string, std::set<std::string>> faults_;  // the probe's reason -> devices
};

}  // namespace railyard::dra
