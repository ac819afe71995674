#include "nccl-tests-wrapper/fleet/report.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include "common/log_escape.h"
#include "common/xml.h"
#include "kube/railyard_names.h"
#include "nccl-tests-wrapper/checks/firmware.h"

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

// Every rank that joined rank 0, in rank order: all of them when the fleet ran.
std::vector<int> joined_ranks(const FleetReport& r) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(r.nodes.size()); ++i)
    if (std::find(r.missing.begin(), r.missing.end(), i) == r.missing.end()) out.push_back(i);
  return out;
}

std::string verdict(const FleetReport& r) {
  if (!r.could_not_run.empty()) return "could not run";
  return r.culprits.empty() ? "healthy" : "culprits";
}

}  // namespace

FleetReport fleet_not_run(const std::string& why,
                          const std::vector<std::optional<std::string>>& joined, int rails) {
  FleetReport r;
  r.rails = rails;
  r.could_not_run = why;
  for (size_t i = 0; i < joined.size(); ++i) {
    r.nodes.push_back(joined[i].value_or(""));
    if (!joined[i]) r.missing.push_back(static_cast<int>(i));
  }
  return r;
}

std::string fleet_not_run_text(const FleetReport& r) {
  if (r.nodes.empty()) return r.could_not_run;  // it stopped before the rendezvous opened
  std::string joined, missing;
  for (int i : joined_ranks(r))
    joined +=
        (joined.empty() ? "" : ", ") + ("rank " + std::to_string(i) + " (" + name_of(r, i) + ")");
  for (int i : r.missing) missing += (missing.empty() ? "" : ", ") + ("rank " + std::to_string(i));
  return r.could_not_run + "; joined: " + (joined.empty() ? "none" : joined) +
         "; never joined: " + (missing.empty() ? "none" : missing);
}

FleetFirmware fleet_firmware(const FleetReport& r) {
  std::vector<std::string> all;
  for (const auto& node : r.firmware) all.insert(all.end(), node.begin(), node.end());
  const FirmwareTally tally = tally_firmware(all);
  FleetFirmware out{tally.majority, tally.known, {}};
  if (out.majority.empty()) return out;
  for (size_t i = 0; i < r.firmware.size(); ++i) {
    FirmwareOutlier o{static_cast<int>(i), {}};
    for (size_t k = 0; k < r.firmware[i].size(); ++k)
      if (!r.firmware[i][k].empty() && r.firmware[i][k] != out.majority)
        o.rails[static_cast<int>(k)] = r.firmware[i][k];
    if (!o.rails.empty()) out.differing.push_back(std::move(o));
  }
  return out;
}

json fleet_json(const FleetReport& r) {
  json pairs = json::array(), culprits = json::array();
  for (size_t i = 0; i < r.results.size(); ++i) {
    const PairResult& p = r.results[i];
    json j = {{"a", name_of(r, p.a)},
              {"b", name_of(r, p.b)},
              {"rail", p.rail},
              {"busbw", p.busbw ? json(*p.busbw) : json(nullptr)}};
    if (i < r.relative.size()) j["relative"] = r.relative[i] ? json(*r.relative[i]) : json(nullptr);
    pairs.push_back(j);
  }
  for (const auto& c : r.culprits) {
    json j = {{"kind", c.kind},
              {"node", c.node >= 0 ? json(name_of(r, c.node)) : json(nullptr)},
              {"peer", c.peer >= 0 ? json(name_of(r, c.peer)) : json(nullptr)},
              {"rail", c.rail >= 0 ? json(c.rail) : json(nullptr)},
              {"evidence", c.evidence}};
    if (c.other_rail >= 0) j["other_rail"] = c.other_rail;
    culprits.push_back(j);
  }
  json rings = json::array();
  for (const auto& g : r.rings) {
    json members = json::array(), bw = json::array();
    for (int m : g.members) members.push_back(name_of(r, m));
    for (const auto& b : g.busbw) bw.push_back(b ? json(*b) : json(nullptr));
    rings.push_back({{"title", g.title}, {"members", members}, {"busbw", bw}});
  }
  json joined = json::array();
  for (int i : joined_ranks(r)) joined.push_back({{"rank", i}, {"node", name_of(r, i)}});
  const FleetFirmware fw = fleet_firmware(r);
  json differing = json::array();
  for (const auto& o : fw.differing) {
    json rails = json::object();
    for (const auto& [k, v] : o.rails) rails[std::to_string(k)] = v;
    differing.push_back({{"node", name_of(r, o.node)}, {"rails", rails}});
  }
  return {{"verdict", verdict(r)},
          {"reason", r.could_not_run.empty() ? json(nullptr) : json(r.could_not_run)},
          {"nodes", r.nodes},
          {"joined", joined},
          {"missing", r.missing},
          {"rails", r.rails},
          {"fleet_median_busbw", fleet_median_busbw(r.results)},
          {"pairs", pairs},
          {"culprits", culprits},
          {"rings", rings},
          {"firmware",
           {{"majority", fw.majority.empty() ? json(nullptr) : json(fw.majority)},
            {"known", fw.known},
            {"differing", differing}}},
          {"problems", r.problems}};
}

std::string fleet_heatmap_svg(const FleetReport& r, int rail) {
  const int n = static_cast<int>(r.nodes.size());
  const double cell = std::max(6.0, std::min(40.0, 600.0 / std::max(n, 1)));
  const double left = 120, top = 50, size = cell * n;
  const double median = fleet_median_busbw(r.results);
  // Each pair's bandwidth and its colour: its share of its round's median when the run judged
  // it so (the verdict's view), else of the fleet's median pair.
  std::map<std::pair<int, int>, std::pair<std::optional<double>, double>> at;
  for (size_t i = 0; i < r.results.size(); ++i) {
    const PairResult& p = r.results[i];
    if (p.rail != rail) continue;
    double share = p.busbw && median > 0 ? *p.busbw / median : 0;
    if (i < r.relative.size()) share = r.relative[i].value_or(0);
    at[{p.a, p.b}] = at[{p.b, p.a}] = {p.busbw, share};
  }
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
        } else if (!it->second.first) {
          fill = "#202020";
          title += ": unreachable";
        } else {
          fill = colour(it->second.second);
          char buf[64];
          std::snprintf(buf, sizeof buf, ": %.3g GB/s (%.0f%%)", *it->second.first,
                        it->second.second * 100);
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
  // JUnit's <error> is a test that could not be made, as against a <failure> that was measured.
  const bool error = !r.could_not_run.empty();
  if (error)
    cases << "    <testcase classname=\"fleet\" name=\"the fleet run\">\n      <error message=\""
          << xml_escape(fleet_not_run_text(r)) << "\"/>\n    </testcase>\n";
  else if (r.culprits.empty())
    cases << "    <testcase classname=\"fleet\" name=\"every pair, every rail\"/>\n";
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
         "name=\"railyard-validate fleet\" tests=\""
      << std::max<size_t>(r.culprits.size() + error, 1) << "\" failures=\"" << r.culprits.size()
      << "\" errors=\"" << error << "\">\n"
      << cases.str() << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

const PairResult* slowest_pair(const std::vector<PairResult>& results) {
  const PairResult* worst = nullptr;
  for (const auto& p : results)
    if (!worst || (worst->busbw && (!p.busbw || *p.busbw < *worst->busbw))) worst = &p;
  return worst;
}

std::string gbps_text(double busbw) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g GB/s", busbw);
  return buf;
}

void print_fleet_summary(const FleetReport& r, std::ostream& out) {
  const int n = static_cast<int>(r.nodes.size());
  const double median = fleet_median_busbw(r.results);
  char line[256];
  std::snprintf(line, sizeof line,
                "# fleet: %d nodes, %d rails, %zu pair-rails, median pair %.3f GB/s\n", n, r.rails,
                r.results.size(), median);
  out << line;
  for (const auto& g : r.rings) {
    std::snprintf(line, sizeof line, "#   ring %-12s %3zu nodes (%s..%s) busbw", g.title.c_str(),
                  g.members.size(), name_of(r, g.members.front()).c_str(),
                  name_of(r, g.members.back()).c_str());
    out << line;
    for (const auto& b : g.busbw) {
      std::snprintf(line, sizeof line, b ? " %8.3f" : "   silent", b.value_or(0));
      out << line;
    }
    out << " GB/s\n";
  }
  for (int k = 0; k < r.rails && !r.results.empty(); ++k) {
    std::vector<PairResult> rail;
    for (const auto& p : r.results)
      if (p.rail == k) rail.push_back(p);
    std::snprintf(line, sizeof line, "#   rail %d: median %8.3f GB/s", k, fleet_median_busbw(rail));
    out << line;
    if (const PairResult* worst = slowest_pair(rail))
      out << ", slowest " << name_of(r, worst->a) << "-" << name_of(r, worst->b) << ": "
          << (worst->busbw ? gbps_text(*worst->busbw) : "unreachable");
    out << "\n";
  }
  if (n <= 16 && !r.results.empty())
    for (int k = 0; k < r.rails; ++k) {
      std::map<std::pair<int, int>, std::optional<double>> at;
      for (const auto& p : r.results)
        if (p.rail == k) at[{p.a, p.b}] = at[{p.b, p.a}] = p.busbw;
      out << "# rail " << k << " (GB/s; -- unreachable)\n#" << std::string(14, ' ');
      // The names' last 8 letters: nodes of one fleet tend to share their beginning.
      for (int b = 0; b < n; ++b) {
        const std::string name = name_of(r, b);
        out << " " << std::setw(8) << name.substr(name.size() > 8 ? name.size() - 8 : 0);
      }
      out << "\n";
      for (int a = 0; a < n; ++a) {
        const std::string name = name_of(r, a);
        out << "# " << std::setw(13) << name.substr(name.size() > 13 ? name.size() - 13 : 0);
        for (int b = 0; b < n; ++b) {
          const auto it = at.find({a, b});
          if (a == b || it == at.end())
            out << "        .";
          else if (!it->second)
            out << "       --";
          else {
            std::snprintf(line, sizeof line, " %8.3f", *it->second);
            out << line;
          }
        }
        out << "\n";
      }
    }
  const FleetFirmware fw = fleet_firmware(r);
  if (fw.known > 0) {
    out << "# Firmware : "
        << (fw.majority.empty() ? "no version on more than half"
                                : escape_controls(fw.majority) + " on most")
        << " of " << fw.known << " rail NICs"
        << (fw.differing.empty() ? ", every node on it\n" : "; nodes on another:\n");
    for (const auto& o : fw.differing)
      for (const auto& [k, v] : o.rails)
        out << "#   " << name_of(r, o.node) << " rail " << k << ": " << escape_controls(v) << "\n";
  }
  out << (r.culprits.empty() ? "# Culprits : none, the fleet is healthy\n" : "# Culprits :\n");
  for (const auto& c : r.culprits) {
    std::string who = c.node >= 0 ? name_of(r, c.node) : "rail " + std::to_string(c.rail);
    if (c.peer >= 0) who += " - " + name_of(r, c.peer);
    std::snprintf(line, sizeof line, "#   %-8s %-28s ", c.kind.c_str(), who.c_str());
    out << line << c.evidence << "\n";
  }
  if (!r.problems.empty()) {
    out << "# Problems on the way (" << r.problems.size() << "):\n";
    for (size_t i = 0; i < r.problems.size() && i < 10; ++i) out << "#   " << r.problems[i] << "\n";
    if (r.problems.size() > 10) out << "#   ... the rest are in the JSON report\n";
  }
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
                      {{"labels", {{kube::kValidatedLabel, "false"}}},
                       {"annotations", {{"railyard.io/fleet-validation", evidence.dump()}}}}}}},
                   {"taint", taint_rails.empty() ? json(nullptr)
                                                 : json("kubectl taint nodes " + name +
                                                        " railyard.io/failing-nic=" + taint_rails +
                                                        ":NoSchedule --overwrite")}});
  }
  return out;
}

}  // namespace railyard::validate
