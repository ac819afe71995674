#include "deviceplugin/preferred.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace railyard::deviceplugin {
namespace {

namespace topo = railyard::topology;

using Cost = std::tuple<int, int, int, int>;  // duplicate rails, NUMA nodes, worst path, path sum

class Scorer {
 public:
  Scorer(const topo::Node& node, const std::vector<const PoolDevice*>& devs)
      : n_(devs.size()), path_(n_ * n_, 0) {
    auto anchor = [&](const PoolDevice* d) -> const topo::PciDevice& {
      return d->gpu >= 0 ? node.gpus[static_cast<size_t>(d->gpu)].pci : node.function(d->fn).pci;
    };
    for (size_t a = 0; a < n_; ++a)
      for (size_t b = a + 1; b < n_; ++b)
        path_[a * n_ + b] = path_[b * n_ + a] =
            static_cast<int>(topo::path_class(anchor(devs[a]), anchor(devs[b])));
    for (const auto* d : devs) {
      rail_.push_back(d->rail);
      numa_.push_back(d->numa);
    }
  }

  Cost cost(const std::vector<size_t>& set) const {
    std::set<int> rails, numas;
    int unrailed = 0, worst = 0, sum = 0;
    for (size_t i = 0; i < set.size(); ++i) {
      if (rail_[set[i]] < 0)
        ++unrailed;
      else
        rails.insert(rail_[set[i]]);
      if (numa_[set[i]] >= 0) numas.insert(numa_[set[i]]);
      for (size_t j = i + 1; j < set.size(); ++j) {
        const int p = path_[set[i] * n_ + set[j]];
        worst = std::max(worst, p);
        sum += p;
      }
    }
    const int dup = static_cast<int>(set.size()) - unrailed - static_cast<int>(rails.size());
    return {dup, static_cast<int>(numas.size()), worst, sum};
  }

 private:
  size_t n_;
  std::vector<int> path_, rail_, numa_;
};

}  // namespace

std::vector<std::string> preferred_allocation(const Pool& pool, const topo::Node& node,
                                              const std::vector<std::string>& available,
                                              const std::vector<std::string>& must_include,
                                              int size) {
  std::vector<std::string> avail(available.begin(), available.end());
  std::sort(avail.begin(), avail.end());
  avail.erase(std::unique(avail.begin(), avail.end()), avail.end());
  std::vector<const PoolDevice*> devs;
  for (const auto& id : avail) {
    const PoolDevice* d = pool.find(id);
    if (!d) throw AllocateError(pool.resource + ": unknown device ID '" + id + "'");
    devs.push_back(d);
  }
  if (size < 0 || static_cast<size_t>(size) > devs.size())
    throw AllocateError(pool.resource + ": " + std::to_string(size) + " devices asked, " +
                        std::to_string(devs.size()) + " available");
  std::vector<size_t> must;
  for (const auto& id : must_include) {
    auto it = std::lower_bound(avail.begin(), avail.end(), id);
    if (it == avail.end() || *it != id)
      throw AllocateError(pool.resource + ": must_include device '" + id + "' is not available");
    const size_t idx = static_cast<size_t>(it - avail.begin());
    if (std::find(must.begin(), must.end(), idx) == must.end()) must.push_back(idx);
  }
  if (must.size() > static_cast<size_t>(size))
    throw AllocateError(pool.resource + ": must_include names more devices than the size asked");

  const Scorer scorer(node, devs);
  auto grow = [&](std::vector<size_t> set) {
    while (set.size() < static_cast<size_t>(size)) {
      size_t best = devs.size();
      Cost best_cost{};
      for (size_t c = 0; c < devs.size(); ++c) {
        if (std::find(set.begin(), set.end(), c) != set.end()) continue;
        set.push_back(c);
        const Cost cost = scorer.cost(set);
        set.pop_back();
        if (best == devs.size() || cost < best_cost) best = c, best_cost = cost;
      }
      set.push_back(best);
    }
    return set;
  };
  // Greedy from every possible first device when nothing is fixed: a fragmented node often has
  // its tight group away from the lowest IDs.
  std::vector<size_t> chosen;
  Cost chosen_cost{};
  auto consider = [&](std::vector<size_t> start) {
    auto set = grow(std::move(start));
    const Cost c = scorer.cost(set);
    if (chosen.empty() || c < chosen_cost) chosen = std::move(set), chosen_cost = c;
  };
  if (!must.empty() || size == 0)
    consider(must);
  else
    for (size_t s = 0; s < devs.size(); ++s) consider({s});

  std::vector<std::string> out;
  for (size_t i : chosen) out.push_back(avail[i]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace railyard::deviceplugin
