#include "test/support/fixture_node.h"

#include "test/fixturegen/fixture.h"

namespace railyard::testing {

std::filesystem::path fixture_description(const std::string& name) {
  return std::filesystem::path(RAILYARD_FIXTURES_DIR) / (name + ".json");
}

GeneratedFixture::GeneratedFixture(const std::string& name) {
  fixture::generate_file(fixture_description(name), dir_.path());
}

std::vector<std::string> matrix_rows(const topology::Node& node) {
  std::vector<std::pair<std::string, const topology::PciDevice*>> devs;
  for (const auto& g : node.gpus) devs.emplace_back("GPU" + std::to_string(g.index), &g.pci);
  for (size_t i = 0; i < node.nics.size(); ++i)
    devs.emplace_back("NIC" + std::to_string(i), &node.nics[i].pf.pci);
  std::vector<std::string> rows;
  for (const auto& [name, a] : devs) {
    std::string row = name;
    for (const auto& [unused, b] : devs)
      row += " " + std::string(topology::to_string(topology::path_class(*a, *b)));
    rows.push_back(row);
  }
  return rows;
}

std::string rail_names(const topology::Node& node) {
  std::string out;
  for (int idx : node.rails)
    out += (out.empty() ? "" : " ") + node.nics[static_cast<size_t>(idx)].pf.rdma_name();
  return out;
}

std::string bundle_summary(const topology::Node& node) {
  std::string out;
  for (const auto& b : node.bundles)
    out += (out.empty() ? "" : " ") + std::to_string(b.gpu) + ":" +
           node.nics[static_cast<size_t>(b.nic)].pf.rdma_name() + ":" +
           std::string(topology::to_string(b.path));
  return out;
}

}  // namespace railyard::testing
