#include "nccl-tests-wrapper/fleet_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "common/xml.h"

namespace railyard::validate {
namespace {

using nlohmann::json;

std::string name_of(const FleetReport& r, int i) {
  return i >= 0 && static_cast<size_t>(i) < r.nodes.size() ? r.nodes[static_cast<size_t>(i)]
                                                           : std::string();
}

// Red (nothing) through yellow to green (at or above the fleet's median pair).
std::string colour(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int red = fraction < 0.5 ? 215 : static_cast<int>(215 - (fraction - 0.5) * 2 * 170);
  const int green = fraction < 0.5 ? static_cast<int>(50 + fraction * 2 * 140) : 190;
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x40", red, green);
  return buf;
}

}  // namespace

json fleet_json(const FleetReport& r) {
  json pairs = json::array(), culprits = json::array();
  for (const auto& p : r.results)
    pairs.push_back({{"a", name_of(r, p.a)},
                     {"b", name_of(r, p.b)},
                     {"rail", p.rail},
                     {"busbw", p.busbw ? json(*p.busbw) : json(nullptr)}});
  for (const auto& c : r.culprits) {
    json j = {{"kind", c.kind},
              {"node", c.node >= 0 ? json(name_of(r, c.node)) : json(nullptr)},
              {"peer", c.peer >= 0 ? json(name_of(r, c.peer)) : json(nullptr)},
              {"rail", c.rail >= 0 ? json(c.rail) : json(nullptr)},
              {"evidence", c.evidence}};
    if (c.other_rail >= 0) j["other_rail"] = c.other_rail;
    culprits.push_back(j);
  }
  return {{"verdict", r.culprits.empty() ? "healthy" : "culprits"},
          {"nodes", r.nodes},
          {"rails", r.rails},
          {"fleet_median_busbw", fleet_median_busbw(r.results)},
          {"pairs", pairs},
          {"culprits", culprits}};
}

std::string fleet_heatmap_svg(const FleetReport& r, int rail) {
  const int n = static_cast<int>(r.nodes.size());
  const double cell = std::max(6.0, std::min(40.0, 600.0 / std::max(n, 1)));
  const double left = 120, top = 50, size = cell * n;
  const double median = fleet_median_busbw(r.results);
  std::map<std::pair<int, int>, std::optional<double>> at;
  for (const auto& p : r.results)
    if (p.rail == rail) at[{p.a, p.b}] = at[{p.b, p.a}] = p.busbw;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + size + 20 << "\" height=\""
    << top + size + 40 << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"10\" y=\"22\" font-size=\"15\">Rail " << rail
    << ": pair bandwidth against the fleet's median pair (" << median << " GB/s)</text>\n";
  for (int a = 0; a < n; ++a) {
    o << "<text x=\"" << left - 6 << "\" y=\"" << top + (a + 0.7) * cell
      << "\" text-anchor=\"end\">" << xml_escape(name_of(r, a)) << "</text>\n";
    for (int b = 0; b < n; ++b) {
      std::string fill = "#dddddd",
                  title = xml_escape(name_of(r, a)) + " - " + xml_escape(name_of(r, b));
      if (a != b) {
        const auto it = at.find({a, b});
        if (it == at.end()) {
          fill = "#ffffff";
          title += ": not tested";
        } else if (!it->second) {
          fill = "#202020";
          title += ": unreachable";
        } else {
          fill = colour(median > 0 ? *it->second / median : 0);
          char buf[48];
          std::snprintf(buf, sizeof buf, ": %.3g GB/s", *it->second);
          title += buf;
        }
      }
      o << "<rect x=\"" << left + b * cell << "\" y=\"" << top + a * cell << "\" width=\"" << cell
        << "\" height=\"" << cell << "\" fill=\"" << fill << "\" stroke=\"white\"><title>" << title
        << "</title></rect>\n";
    }
  }
  o << "<text x=\"" << left << "\" y=\"" << top + size + 25
    << "\">green: at the median, red: slow, black: unreachable</text>\n</svg>\n";
  return o.str();
}

std::string fleet_junit(const FleetReport& r) {
  std::ostringstream cases;
  for (const auto& c : r.culprits)
    cases << "    <testcase classname=\"fleet." << c.kind << "\" name=\""
          << xml_escape(c.node >= 0 ? name_of(r, c.node) : "rail " + std::to_string(c.rail))
          << "\">\n      <failure message=\"" << xml_escape(c.evidence)
          << "\"/>\n    </testcase>\n";
  if (r.culprits.empty())
    cases << "    <testcase classname=\"fleet\" name=\"every pair, every rail\"/>\n";
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
         "name=\"railyard-validate fleet\" tests=\""
      << std::max<size_t>(r.culprits.size(), 1) << "\" failures=\"" << r.culprits.size() << "\">\n"
      << cases.str() << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

json fleet_node_patches(const FleetReport& r) {
  std::map<int, std::vector<const Culprit*>> by_node;
  for (const auto& c : r.culprits) {
    if (c.node >= 0) by_node[c.node].push_back(&c);
    if (c.peer >= 0) by_node[c.peer].push_back(&c);
  }
  json out = json::array();
  for (const auto& [node, list] : by_node) {
    const std::string name = name_of(r, node);
    json evidence = json::array();
    std::string taint_rails;
    for (const Culprit* c : list) {
      evidence.push_back(c->kind + ": " + c->evidence);
      if (c->node == node && (c->kind == "nic" || c->kind == "miswire" || c->kind == "node"))
        taint_rails += (taint_rails.empty() ? "" : "_") +
                       (c->rail >= 0 ? "rail" + std::to_string(c->rail) : std::string("all"));
    }
    out.push_back({{"node", name},
                   {"patch",
                    {{"metadata",
                      {{"labels", {{"railyard.io/validated", "false"}}},
                       {"annotations", {{"railyard.io/fleet-validation", evidence.dump()}}}}}}},
                   {"taint", taint_rails.empty() ? json(nullptr)
                                                 : json("kubectl taint nodes " + name +
                                                        " railyard.io/failing-nic=" + taint_rails +
                                                        ":NoSchedule --overwrite")}});
  }
  return out;
}

}  // namespace railyard::validate
