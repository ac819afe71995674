#include "nccl-tests-wrapper/fleet/classify.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace railyard::validate {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 1 ? "%.1f GB/s" : "%.3g GB/s", v);
  return buf;
}

}  // namespace

double fleet_median_busbw(const std::vector<PairResult>& results) {
  std::vector<double> all;
  for (const auto& r : results)
    if (r.busbw) all.push_back(*r.busbw);
  return median(std::move(all));
}

std::vector<std::optional<double>> relative_to_run(const std::vector<PairResult>& run) {
  const double m = fleet_median_busbw(run);
  std::vector<std::optional<double>> out;
  for (const auto& r : run)
    out.push_back(r.busbw && m > 0 ? std::optional(*r.busbw / m) : std::nullopt);
  return out;
}

std::vector<bool> slow_rings(const std::vector<std::vector<std::optional<double>>>& busbw,
                             double slow_fraction) {
  std::vector<double> all;
  for (const auto& ring : busbw)
    for (const auto& b : ring)
      if (b) all.push_back(*b);
  const double typical = median(all);
  std::vector<bool> out;
  for (const auto& ring : busbw) {
    double own = 0;
    for (const auto& b : ring) own = std::max(own, b.value_or(0));
    const double floor = std::max(typical, own) * slow_fraction;
    out.push_back(ring.empty() || std::any_of(ring.begin(), ring.end(),
                                              [&](const auto& b) { return !b || *b < floor; }));
  }
  return out;
}

std::vector<Culprit> classify_fleet(int nodes, int rails, const std::vector<PairResult>& results,
                                    const std::vector<Sighting>& sightings,
                                    const ClassifyOptions& options) {
  auto node = [&](int i) {
    return static_cast<size_t>(i) < options.names.size() ? options.names[static_cast<size_t>(i)]
                                                         : "node " + std::to_string(i);
  };
  const double fleet = fleet_median_busbw(results);
  const double slow_below = fleet * options.slow_fraction;
  // bad[k][a][b]: the pair is slow or silent on rail k; tested[k][a][b]: it was measured.
  auto grid = [&] {
    return std::vector<std::vector<std::vector<char>>>(
        static_cast<size_t>(rails),
        std::vector<std::vector<char>>(static_cast<size_t>(nodes),
                                       std::vector<char>(static_cast<size_t>(nodes), 0)));
  };
  auto bad = grid(), tested = grid();
  std::map<std::tuple<int, int, int>, std::optional<double>> value;
  for (const auto& r : results) {
    const bool slow = !r.busbw || *r.busbw < slow_below;
    for (auto [x, y] : {std::pair{r.a, r.b}, std::pair{r.b, r.a}}) {
      bad[static_cast<size_t>(r.rail)][static_cast<size_t>(x)][static_cast<size_t>(y)] = slow;
      tested[static_cast<size_t>(r.rail)][static_cast<size_t>(x)][static_cast<size_t>(y)] = 1;
      value[{r.rail, x, y}] = r.busbw;
    }
  }
  auto at = [](auto& g, int k, int a, int b) -> char& {
    return g[static_cast<size_t>(k)][static_cast<size_t>(a)][static_cast<size_t>(b)];
  };
  // A node is bad on rail k when every pair it was tested in there is bad.
  auto node_bad = [&](int k, int a) {
    int n = 0, slow = 0;
    for (int b = 0; b < nodes; ++b)
      if (b != a && at(tested, k, a, b)) {
        ++n;
        slow += at(bad, k, a, b);
      }
    return n > 0 && slow == n;
  };
  auto describe = [&](int k, int a) {
    std::vector<double> v;
    int silent = 0;
    for (int b = 0; b < nodes; ++b)
      if (b != a && at(tested, k, a, b)) {
        if (auto x = value[{k, a, b}])
          v.push_back(*x);
        else
          ++silent;
      }
    std::string s = v.empty() ? "no traffic" : gbps(median(v)) + " median";
    if (silent) s += ", " + std::to_string(silent) + " peer(s) unreachable";
    return s;
  };

  std::vector<Culprit> out;
  std::vector<std::vector<char>> explained(static_cast<size_t>(rails),
                                           std::vector<char>(static_cast<size_t>(nodes), 0));
  // Whole rails first: every pair slow on rail k.
  std::vector<char> leaf_bad(static_cast<size_t>(rails), 0);
  for (int k = 0; k < rails && nodes > 2; ++k) {
    bool every = true, any = false;
    for (int a = 0; a < nodes; ++a)
      for (int b = a + 1; b < nodes; ++b)
        if (at(tested, k, a, b)) {
          any = true;
          every &= at(bad, k, a, b) != 0;
        }
    if (any && every) {
      leaf_bad[static_cast<size_t>(k)] = 1;
      out.push_back({"leaf", -1, -1, k, -1,
                     "every pair on rail " + std::to_string(k) + " is slow or silent (fleet " +
                         gbps(fleet) + ")"});
    }
  }
  // Whole nodes: bad on every rail that is not itself bad.
  for (int a = 0; a < nodes && nodes > 2; ++a) {
    bool every = true, any = false;
    for (int k = 0; k < rails; ++k)
      if (!leaf_bad[static_cast<size_t>(k)]) {
        any = true;
        every &= node_bad(k, a);
      }
    // A node whose silent NICs were heard on other leaves is miswired, not broken.
    const bool seen_elsewhere = std::any_of(sightings.begin(), sightings.end(), [&](const auto& s) {
      return s.node == a && s.seen_on_rail != s.rail;
    });
    if (!any || !every || seen_elsewhere) continue;
    out.push_back({"node", a, -1, -1, -1,
                   node(a) + " is slow on every rail with every peer (rail 0: " + describe(0, a) +
                       "; fleet " + gbps(fleet) + ")"});
    for (int k = 0; k < rails; ++k) explained[static_cast<size_t>(k)][static_cast<size_t>(a)] = 1;
  }
  // One NIC: a node bad with every peer on one rail; miswired when it was seen on another leaf.
  for (int k = 0; k < rails; ++k) {
    if (leaf_bad[static_cast<size_t>(k)]) continue;
    for (int a = 0; a < nodes && nodes > 2; ++a) {
      if (explained[static_cast<size_t>(k)][static_cast<size_t>(a)] || !node_bad(k, a)) continue;
      explained[static_cast<size_t>(k)][static_cast<size_t>(a)] = 1;
      const auto seen = std::find_if(sightings.begin(), sightings.end(), [&](const Sighting& s) {
        return s.node == a && s.rail == k && s.seen_on_rail != k;
      });
      if (seen != sightings.end())
        out.push_back({"miswire", a, -1, k, seen->seen_on_rail,
                       node(a) + "'s rail " + std::to_string(k) + " NIC is on rail " +
                           std::to_string(seen->seen_on_rail) + "'s leaf (" + describe(k, a) +
                           " on rail " + std::to_string(k) + ")"});
      else
        out.push_back({"nic", a, -1, k, -1,
                       node(a) + " on rail " + std::to_string(k) + ": " + describe(k, a) +
                           " with every peer (fleet " + gbps(fleet) + ")"});
    }
  }
  // What is left: single pairs on one rail, both ends fine with their other peers.
  for (int k = 0; k < rails; ++k) {
    if (leaf_bad[static_cast<size_t>(k)]) continue;
    for (int a = 0; a < nodes; ++a)
      for (int b = a + 1; b < nodes; ++b) {
        if (!at(bad, k, a, b) || explained[static_cast<size_t>(k)][static_cast<size_t>(a)] ||
            explained[static_cast<size_t>(k)][static_cast<size_t>(b)])
          continue;
        const auto v = value[{k, a, b}];
        out.push_back({"cable", a, b, k, -1,
                       "pair " +
                           (options.names.empty() ? std::to_string(a) + "-" + std::to_string(b)
                                                  : node(a) + " - " + node(b)) +
                           " on rail " + std::to_string(k) + ": " +
                           (v ? gbps(*v) : std::string("unreachable")) +
                           ", both fine with their other peers (fleet " + gbps(fleet) + ")"});
      }
  }
  return out;
}

}  // namespace railyard::validate
