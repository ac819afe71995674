// `railyard`: the operator's command. `railyard topo` shows the node model.
#include <CLI/CLI.hpp>
#include <iostream>

#include "topology/discover/discover.h"
#include "topology/render/json.h"
#include "topology/render/render.h"

namespace topo = railyard::topology;

namespace {

int run_topo(const std::string& sysfs_flag, const std::string& rails_flag, bool json) {
  const topo::Sysfs sysfs(topo::sysfs_root_from(sysfs_flag));
  topo::Node node;
  try {
    node = topo::discover(sysfs, topo::load_node_rails(rails_flag));
  } catch (const std::exception& e) {
    std::cerr << "railyard topo: " << e.what() << "\n";
    return 2;
  }
  const bool incomplete = node.diagnostics.has_errors();
  for (const auto& d : node.diagnostics.all()) std::cerr << d.to_string() << "\n";
  if (json) {
    std::cout << topo::to_json(node).dump(2) << "\n";
  } else if (incomplete) {
    std::cerr << "railyard topo: sysfs could not be read completely (errors above); "
                 "not showing a topology that may be wrong\n";
  } else {
    topo::render_text(node, std::cout);
  }
  return incomplete ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard: multi-rail RDMA networking for GPU nodes"};
  app.require_subcommand(1);
  std::string sysfs_root, rails_file;
  bool json = false;
  auto* topo_cmd = app.add_subcommand(
      "topo", "Show GPUs, RDMA NICs, PCIe path classes, rails and GPU<->NIC bundles");
  topo_cmd->add_option("--sysfs-root", sysfs_root,
                       "Read DIR/sys instead of /sys (env RAILYARD_SYSFS_ROOT)");
  topo_cmd->add_option("--rails", rails_file,
                       "Rails file (env RAILYARD_RAILS_FILE, default /etc/railyard/rails.json)");
  topo_cmd->add_flag("--json", json, "Print one JSON object instead of tables");
  CLI11_PARSE(app, argc, argv);
  if (*topo_cmd) return run_topo(sysfs_root, rails_file, json);
  return 2;
}
