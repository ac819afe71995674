// Rails: which RDMA PF is rail k. One function decides it (assign_rails) and every component
// calls it, so the device plugin, the CNI plugin and the benchmarks agree.
//
// The node's rails file (/etc/railyard/rails.json; flag --rails, env RAILYARD_RAILS_FILE):
//   {"rails": ["mlx5_0", "ibp64s0", "0000:4f:00.0"],   // rail k = k-th entry (optional)
//    "selectors": {"linkTypes": ["infiniband"]}}        // which PFs are rails (optional)
// An entry is an RDMA device name, a netdev name or a PCI address of a PF. Without "rails",
// the PFs that pass the selectors are the rails, ordered by PCI address.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/model/node.h"
#include "topology/model/selectors.h"

namespace railyard::topology {

class RailsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RailsConfig {
  std::vector<std::string> order;
  Selectors selectors;
  std::string source;  // the file it came from, for messages; empty for the default
};

inline constexpr const char* kDefaultRailsFile = "/etc/railyard/rails.json";

// The file to read: the flag when given, else RAILYARD_RAILS_FILE, else the default path.
std::filesystem::path rails_file_from(const std::string& flag_value);

// Reads a rails file. A missing file is an error only when `required` (the user named it).
RailsConfig load_rails_config(const std::filesystem::path& file, bool required);

// The node's rails, as every railyard program reads them: the flag's file, else
// RAILYARD_RAILS_FILE's, else the default. A file the flag or the environment names must exist;
// only the default may be missing (every RDMA device a rail then). Throws RailsError.
RailsConfig load_node_rails(const std::string& flag_value = "");
RailsConfig parse_rails_config(const std::string& text, const std::string& source);

// Rail k -> index into `nics`. Throws RailsError for an entry that names no PF, names one twice,
// or names a PF that the selectors leave out.
std::vector<int> assign_rails(const std::vector<Nic>& nics, const RailsConfig& config);

}  // namespace railyard::topology
