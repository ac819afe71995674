// railyard-dra-driver: the DRA driver (resource.k8s.io/v1). For now only `slices`, which prints
// the ResourceSlices this node would publish; the kubelet plugin and the publisher come later
// (dra/README.md).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "dra/health.h"
#include "dra/slices.h"
#include "topology/discover/discover.h"

namespace dra = railyard::dra;
namespace topo = railyard::topology;

namespace {

int run_slices(const std::string& sysfs_flag, const std::string& rails_flag,
               const dra::SliceOptions& options) {
  const topo::Sysfs sysfs(topo::sysfs_root_from(sysfs_flag));
  topo::Node node;
  try {
    const bool named = !rails_flag.empty() || std::getenv("RAILYARD_RAILS_FILE");
    // VF ports as the device plugin reads them, so that both judge a VF's health alike.
    node = topo::discover(sysfs, topo::load_rails_config(topo::rails_file_from(rails_flag), named),
                          {.vf_ports = true});
  } catch (const std::exception& e) {
    std::cerr << "railyard-dra-driver slices: " << e.what() << "\n";
    return 2;
  }
  for (const auto& d : node.diagnostics.all()) std::cerr << d.to_string() << "\n";
  // A v1 List: what `kubectl apply -f` and `kubectl create -f` take as it is.
  nlohmann::json list = {
      {"apiVersion", "v1"}, {"kind", "List"}, {"items", nlohmann::json::array()}};
  for (auto& s : dra::node_slices(node, dra::check_health(sysfs, node), options))
    list["items"].push_back(std::move(s));
  std::cout << list.dump(2) << "\n";
  return node.diagnostics.has_errors() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard-dra-driver: rails and GPU+NIC bundles as DRA devices"};
  app.require_subcommand(1);
  std::string sysfs_root, rails_file;
  const char* env_node = std::getenv("NODE_NAME");
  dra::SliceOptions opt{.node_name = env_node ? env_node : ""};
  bool keep_unhealthy = false;
  auto* slices = app.add_subcommand("slices", "Print this node's ResourceSlices (a v1 List)");
  slices->add_option("--sysfs-root", sysfs_root,
                     "Read DIR/sys instead of /sys (env RAILYARD_SYSFS_ROOT)");
  slices->add_option("--rails", rails_file,
                     "Rails file (env RAILYARD_RAILS_FILE, default /etc/railyard/rails.json)");
  slices->add_option("--node", opt.node_name, "Node name (env NODE_NAME)");
  slices->add_option("--generation", opt.generation, "spec.pool.generation")->capture_default_str();
  slices->add_flag("--keep-unhealthy", keep_unhealthy,
                   "Publish unhealthy devices with railyard.io/healthy false instead of dropping");
  CLI11_PARSE(app, argc, argv);
  if (opt.node_name.empty()) {
    std::cerr << "railyard-dra-driver slices: --node or NODE_NAME is required\n";
    return 2;
  }
  opt.unhealthy = keep_unhealthy ? dra::Unhealthy::kMark : dra::Unhealthy::kDrop;
  if (*slices) return run_slices(sysfs_root, rails_file, opt);
  return 2;
}
