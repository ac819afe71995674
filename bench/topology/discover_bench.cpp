// Times topology discovery (sysfs walk + rails + bundles) on a sysfs root, N runs, and prints
// the median and spread. bench/topology/run.sh drives it on a generated large node.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "topology/discover/discover.h"

namespace topo = railyard::topology;

int main(int argc, char** argv) {
  CLI::App app{"Time railyard topology discovery"};
  std::string root;
  int runs = 50;
  bool json = false;
  app.add_option("--sysfs-root", root, "sysfs root to discover")->required();
  app.add_option("--runs", runs, "timed runs (after one warm-up)");
  app.add_flag("--json", json, "print JSON");
  CLI11_PARSE(app, argc, argv);

  const topo::Sysfs sysfs(root);
  topo::Node node = topo::discover(sysfs, {});  // warm-up; also what we report
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    topo::Node n = topo::discover(sysfs, {});
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  size_t vfs = 0;
  for (const auto& n : node.nics) vfs += n.vfs.size();
  const double median = ms[ms.size() / 2];
  const double p10 = ms[ms.size() / 10], p90 = ms[ms.size() * 9 / 10];
  if (json) {
    std::cout << nlohmann::json{{"gpus", node.gpus.size()},
                                {"nics", node.nics.size()},
                                {"vfs", vfs},
                                {"runs", runs},
                                {"median_ms", median},
                                {"p10_ms", p10},
                                {"p90_ms", p90}}
                     .dump()
              << "\n";
  } else {
    std::printf(
        "discovered %zu GPUs, %zu NICs, %zu VFs; %d runs: median %.2f ms (p10 %.2f, p90 %.2f)\n",
        node.gpus.size(), node.nics.size(), vfs, runs, median, p10, p90);
  }
  return node.diagnostics.has_errors() ? 1 : 0;
}
