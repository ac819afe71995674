#include "topology/model/rails.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace railyard::topology {

namespace {

// RAILYARD_RAILS_FILE when set and not empty: the one place it is read.
const char* rails_file_env() {
  const char* env = std::getenv("RAILYARD_RAILS_FILE");
  return env && *env ? env : nullptr;
}

}  // namespace

std::filesystem::path rails_file_from(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = rails_file_env()) return env;
  return kDefaultRailsFile;
}

RailsConfig load_node_rails(const std::string& flag_value) {
  const bool named = !flag_value.empty() || rails_file_env();
  return load_rails_config(rails_file_from(flag_value), named);
}

RailsConfig parse_rails_config(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e999
    throw RailsError(source + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw RailsError(source + ": must be a JSON object");
  RailsConfig cfg;
  cfg.source = source;
  for (const auto& [key, value] : j.items()) {
    if (key == "rails") {
      if (!value.is_array()) throw RailsError(source + ": 'rails' must be a list of strings");
      for (const auto& v : value) {
        if (!v.is_string() || v.get<std::string>().empty())
          throw RailsError(source + ": 'rails' must be a list of non-empty strings");
        cfg.order.push_back(v.get<std::string>());
      }
    } else if (key == "selectors") {
      try {
        cfg.selectors = Selectors::from_json(value);
      } catch (const SelectorError& e) {
        throw RailsError(source + ": " + e.what());
      }
    } else {
      throw RailsError(source + ": unknown field '" + key + "' (expected 'rails', 'selectors')");
    }
  }
  return cfg;
}

RailsConfig load_rails_config(const std::filesystem::path& file, bool required) {
  std::ifstream in(file);
  if (!in) {
    if (!required && !std::filesystem::exists(file)) return RailsConfig{};
    throw RailsError(file.string() + ": cannot read the rails file");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_rails_config(ss.str(), file.string());
}

namespace {

bool names_pf(const Nic& nic, const std::string& entry) {
  if (entry == nic.pf.rdma_name()) return true;
  for (const auto& nd : nic.pf.netdevs)
    if (nd.name == entry) return true;
  auto addr = PciAddress::parse(entry);
  return addr && *addr == nic.pf.pci.address;
}

}  // namespace

std::vector<int> assign_rails(const std::vector<Nic>& nics, const RailsConfig& config) {
  const std::string where = config.source.empty() ? "rails" : config.source;
  std::vector<int> rails;
  auto selected = [&](const Nic& nic) {
    Selectors s = config.selectors;
    s.rails.clear();  // rails are being decided here
    return s.matches(nic, nic.pf);
  };
  if (config.order.empty()) {
    for (size_t i = 0; i < nics.size(); ++i)  // nics are sorted by PCI address
      if (selected(nics[i])) rails.push_back(static_cast<int>(i));
    return rails;
  }
  for (size_t k = 0; k < config.order.size(); ++k) {
    const std::string& entry = config.order[k];
    auto it =
        std::find_if(nics.begin(), nics.end(), [&](const Nic& n) { return names_pf(n, entry); });
    if (it == nics.end())
      throw RailsError(where + ": rail " + std::to_string(k) + " '" + entry +
                       "' names no RDMA PF on this node");
    const int idx = static_cast<int>(it - nics.begin());
    if (std::find(rails.begin(), rails.end(), idx) != rails.end())
      throw RailsError(where + ": rail " + std::to_string(k) + " '" + entry +
                       "' names a PF that is already a rail");
    if (!selected(*it))
      throw RailsError(where + ": rail " + std::to_string(k) + " '" + entry +
                       "' is left out by the selectors");
    rails.push_back(idx);
  }
  return rails;
}

}  // namespace railyard::topology
