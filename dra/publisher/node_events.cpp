#include "dra/publisher/node_events.h"

#include <spdlog/spdlog.h>

#include "common/log_escape.h"

namespace railyard::dra {

using json = nlohmann::json;

namespace {

constexpr size_t kNamesInMessage = 10;
constexpr size_t kMaxMessage = 1024;  // the API server's limit is larger; a person reads it

std::string names(const std::set<std::string>& devices) {
  std::string out;
  size_t n = 0;
  for (const auto& d : devices) {
    if (n++ == kNamesInMessage)
      return out + " and " + std::to_string(devices.size() - kNamesInMessage) + " more";
    out += (out.empty() ? "" : ", ") + d;
  }
  return out;
}

std::string count(size_t n) {
  return std::to_string(n) + (n == 1 ? " device" : " devices");
}

}  // namespace

json NodeEvents::event(const std::string& type, const std::string& reason,
                       const std::string& message, const std::string& node_uid,
                       const std::string& now) const {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"generateName", node_ + "."}, {"namespace", "default"}}},
          {"involvedObject",
           {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node_}, {"uid", node_uid}}},
          {"type", type},
          {"reason", reason},
          {"message",
           message.size() > kMaxMessage ? message.substr(0, kMaxMessage - 3) + "..." : message},
          {"source", {{"component", "railyard-dra-driver"}, {"host", node_}}},
          {"reportingComponent", "railyard.io/dra-driver"},
          {"reportingInstance", node_},
          {"firstTimestamp", now},
          {"lastTimestamp", now},
          {"count", 1}};
}

void NodeEvents::update(const std::vector<Device>& devices, const std::string& node_uid,
                        const std::string& now) {
  std::map<std::string, std::set<std::string>> faults;
  std::map<std::string, std::string> value;  // reason -> the taint's value
  for (const auto& d : devices)
    if (!d.healthy) {
      const std::string reason = d.reason.empty() ? "unhealthy" : d.reason;
      faults[reason].insert(d.name);
      value[reason] = std::string(taint_value(d.fault));
    }
  const std::string path = "/api/v1/namespaces/default/events";
  auto post = [&](const std::string& type, const std::string& reason, const std::string& message) {
    const json e = event(type, reason, message, node_uid, now);
    const auto r = api_.request("POST", path, &e);
    if (!r.ok())
      spdlog::warn("could not record the Event \"{}\" on Node {}: {}", escape_controls(message),
                   node_, escape_controls(r.message()));
  };
  for (const auto& [reason, devs] : faults) {
    auto was = faults_.find(reason);
    if (was != faults_.end() && was->second == devs) continue;
    post("Warning", "RailDown",
         count(devs.size()) + " of railyard.io " + what_ + " (" + value[reason] +
             "): " + names(devs) + ": " + reason);
  }
  for (const auto& [reason, devs] : faults_)
    if (!faults.count(reason))
      post("Normal", "RailUp",
           count(devs.size()) + " of railyard.io healthy again: " + names(devs) +
               " (was: " + reason + ")");
  faults_ = std::move(faults);
}

}  // namespace railyard::dra
