// port-errors and link-flaps: what each rail's counters gained over the benchmarks.
#include "nccl-tests-wrapper/checks/counters.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

std::optional<uint64_t> parse_u64(const topology::Attr& a) {
  if (!a.ok()) return std::nullopt;
  unsigned long long v = 0;
  char extra = 0;
  if (std::sscanf(a.value.c_str(), "%llu%c", &v, &extra) != 1) return std::nullopt;
  return v;
}

// A counter by its name, wherever the port keeps it: mlx5 has link_downed in counters/, rxe in
// hw_counters/.
std::optional<uint64_t> find(const RailCounters& c, const std::string& name) {
  for (const char* dir : {"counters/", "hw_counters/"})
    if (auto it = c.values.find(dir + name); it != c.values.end()) return it->second;
  return std::nullopt;
}

std::optional<int64_t> growth(const RailCounters& before, const RailCounters& after,
                              const std::string& name) {
  const auto b = find(before, name), a = find(after, name);
  if (!a || !b) return std::nullopt;
  return *a >= *b ? static_cast<int64_t>(*a - *b) : 0;
}

std::string over(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " over %.1f s", seconds);
  return buf;
}

}  // namespace

RailCounters read_rail_counters(const topology::Sysfs& sysfs, const std::string& rdma_device,
                                int port, const std::string& netdev) {
  RailCounters c;
  if (!rdma_device.empty())
    if (auto dir = sysfs.open_dir(
            sysfs.sys("class/infiniband/" + rdma_device + "/ports/" + std::to_string(port))))
      for (const char* sub : {"counters", "hw_counters"})
        for (const auto& name : dir->list(sub))
          if (auto v = parse_u64(dir->read(std::string(sub) + "/" + name)))
            c.values[std::string(sub) + "/" + name] = *v;
  if (!netdev.empty())
    if (auto dir = sysfs.open_dir(sysfs.sys("class/net/" + netdev)))
      c.carrier_changes = parse_u64(dir->read("carrier_changes"));
  return c;
}

std::map<std::string, int64_t> counter_delta(const RailCounters& before,
                                             const RailCounters& after) {
  std::map<std::string, int64_t> d;
  for (const auto& [name, a] : after.values)
    if (auto b = before.values.find(name); b != before.values.end())
      d[name] = a >= b->second ? static_cast<int64_t>(a - b->second) : 0;
  if (before.carrier_changes && after.carrier_changes)
    d["carrier_changes"] =
        *after.carrier_changes >= *before.carrier_changes
            ? static_cast<int64_t>(*after.carrier_changes - *before.carrier_changes)
            : 0;
  return d;
}

const std::vector<std::string>& error_counter_names() {
  static const std::vector<std::string> names = {"symbol_error",
                                                 "link_downed",
                                                 "link_error_recovery",
                                                 "port_rcv_errors",
                                                 "port_xmit_discards",
                                                 "local_link_integrity_errors",
                                                 "excessive_buffer_overrun_errors"};
  return names;
}

const std::vector<std::string>& roce_counter_names() {
  static const std::vector<std::string> names = {
      "out_of_sequence", "packet_seq_err", "roce_adp_retrans", "np_cnp_sent", "rp_cnp_handled"};
  return names;
}

Finding judge_port_errors(const std::string& subject, const RailCounters& before,
                          const RailCounters& after, double seconds, const CounterLimits& limits) {
  if (after.values.empty())
    return Finding::unknown_because(subject, "port-errors",
                                    "the port shows no counters/ or hw_counters/ in sysfs");
  std::string bad, seen;
  int read = 0;
  auto limit = [&](const std::string& n, uint64_t dflt) {
    auto it = limits.thresholds.find(n);
    return it == limits.thresholds.end() ? dflt : it->second;
  };
  for (const auto& n : error_counter_names()) {
    const auto g = growth(before, after, n);
    if (!g) continue;
    ++read;
    if (static_cast<uint64_t>(*g) > limit(n, 0))
      bad += (bad.empty() ? "" : ", ") + n + " +" + std::to_string(*g) + " (" +
             std::to_string(*find(before, n)) + " -> " + std::to_string(*find(after, n)) + ")";
  }
  for (const auto& n : roce_counter_names()) {
    const auto g = growth(before, after, n);
    if (!g) continue;
    seen += (seen.empty() ? "; " : ", ") + n + " +" + std::to_string(*g);
    if (static_cast<uint64_t>(*g) > limit(n, UINT64_MAX))
      bad += (bad.empty() ? "" : ", ") + n + " +" + std::to_string(*g) + " above " +
             std::to_string(limit(n, 0));
  }
  if (read == 0 && seen.empty())
    return Finding::unknown_because(subject, "port-errors",
                                    "none of the error counters is among the port's " +
                                        std::to_string(after.values.size()) + " counters");
  nlohmann::json growths = nlohmann::json::object();
  for (const auto* names : {&error_counter_names(), &roce_counter_names()})
    for (const auto& n : *names)
      if (const auto g = growth(before, after, n)) growths[n] = *g;
  const nlohmann::json evidence = {{"seconds", seconds}, {"growth", growths}};
  if (!bad.empty())
    return Finding::judged(subject, "port-errors", false, bad + over(seconds)).with(evidence);
  return Finding::judged(subject, "port-errors", true,
                         "no error counter grew" + over(seconds) + " (" + std::to_string(read) +
                             " read)" + seen)
      .with(evidence);
}

Finding judge_link_flaps(const std::string& subject, const RailCounters& before,
                         const RailCounters& after, double seconds, const CounterLimits& limits) {
  const auto downed = growth(before, after, "link_downed");
  const bool carrier = before.carrier_changes && after.carrier_changes;
  if (!downed && !carrier)
    return Finding::unknown_because(subject, "link-flaps",
                                    "neither carrier_changes nor link_downed can be read");
  // carrier_changes counts both edges: a flap (down, then up) is two.
  const int64_t edges = carrier && *after.carrier_changes > *before.carrier_changes
                            ? static_cast<int64_t>(*after.carrier_changes - *before.carrier_changes)
                            : 0;
  const int64_t flaps = std::max<int64_t>((edges + 1) / 2, downed.value_or(0));
  std::string evidence = carrier ? "carrier_changes +" + std::to_string(edges) : "";
  if (downed)
    evidence +=
        (evidence.empty() ? "" : ", ") + std::string("link_downed +") + std::to_string(*downed);
  const bool ok = flaps <= limits.max_link_flaps;
  nlohmann::json e = {{"seconds", seconds}, {"flaps", flaps}};
  if (carrier) e["carrier_changes"] = edges;
  if (downed) e["link_downed"] = *downed;
  return Finding::judged(subject, "link-flaps", ok,
                         (ok && flaps == 0 ? "no flap" : std::to_string(flaps) + " flap(s)") +
                             over(seconds) + " (" + evidence + ")")
      .with(e);
}

namespace {

class CountersCheck : public NodeCheck {
 public:
  void after_runs(const NodeView& v, const RunsSeen& seen,
                  std::vector<Finding>& out) const override {
    const CounterLimits limits{v.settings.counter_thresholds, v.settings.max_link_flaps};
    for (size_t k = 0; k < v.rails() && k < seen.before.size() && k < seen.after.size(); ++k) {
      const std::string who = v.rail_name(k);
      if (v.settings.port_errors)
        out.push_back(judge_port_errors(who, seen.before[k], seen.after[k], seen.seconds, limits)
                          .on_rail(static_cast<int>(k)));
      if (v.settings.link_flaps)
        out.push_back(judge_link_flaps(who, seen.before[k], seen.after[k], seen.seconds, limits)
                          .on_rail(static_cast<int>(k)));
    }
  }
};

}  // namespace

const NodeCheck& counters_check() {
  static const CountersCheck c;
  return c;
}

}  // namespace railyard::validate
