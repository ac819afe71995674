// Test helpers: a generated fixture in a temp dir, and the node model rendered compactly so that
// expectations can be written as text.
#pragma once

#include <string>
#include <vector>

#include "test/support/temp_dir.h"
#include "topology/discover/discover.h"

namespace railyard::testing {

// Generates test/fixtures/<name>.json into a fresh temp dir.
class GeneratedFixture {
 public:
  explicit GeneratedFixture(const std::string& name);
  const std::filesystem::path& root() const { return dir_.path(); }
  std::filesystem::path sys(const std::string& rel) const { return dir_.path() / "sys" / rel; }
  topology::Sysfs sysfs() const { return topology::Sysfs(dir_.path()); }

 private:
  TempDir dir_;
};

std::filesystem::path fixture_description(const std::string& name);

// One line per GPU and NIC: "GPU0 X NODE ... PIX" (the rows of `railyard topo`'s matrix).
std::vector<std::string> matrix_rows(const topology::Node& node);
// "mlx5_0 mlx5_3 ..." for rail 0, 1, ...
std::string rail_names(const topology::Node& node);
// "0:mlx5_0:PIX 1:mlx5_3:PIX ..." for GPU 0, 1, ...
std::string bundle_summary(const topology::Node& node);

}  // namespace railyard::testing
