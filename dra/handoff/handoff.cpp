#include "dra/handoff/handoff.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"

namespace railyard::dra {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// UIDs and PCI addresses become file names: nothing that could leave the directory.
const std::string& checked_name(const std::string& s, const char* what) {
  const bool ok = !s.empty() && s.size() <= 128 && s != "." && s != ".." &&
                  std::all_of(s.begin(), s.end(), [](unsigned char c) {
                    return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == ':';
                  });
  if (!ok) throw std::runtime_error(std::string("not a valid ") + what + ": '" + s + "'");
  return s;
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::exception& e) {
    throw std::runtime_error(p.string() + ": not JSON: " + e.what());
  }
}

}  // namespace

void write_pod_claim(const fs::path& dir, const std::string& pod_uid, const std::string& claim_uid,
                     const std::vector<ClaimedNic>& nics) {
  json list = json::array();
  for (const auto& n : nics)
    list.push_back({{"claimUID", n.claim_uid},
                    {"claim", n.claim},
                    {"device", n.device},
                    {"pci", n.pci},
                    {"rail", n.rail}});
  write_file_atomically(dir / "pods" / checked_name(pod_uid, "pod UID") /
                            (checked_name(claim_uid, "claim UID") + ".json"),
                        json{{"nics", list}}.dump(2) + "\n");
}

void remove_pod_claim(const fs::path& dir, const std::string& pod_uid,
                      const std::string& claim_uid) {
  const fs::path pod = dir / "pods" / checked_name(pod_uid, "pod UID");
  remove_file(pod / (checked_name(claim_uid, "claim UID") + ".json"));
  std::error_code ec;
  fs::remove(pod, ec);  // only when empty: another claim of the pod keeps it
}

std::vector<ClaimedNic> pod_nics(const fs::path& dir, const std::string& pod_uid) {
  std::vector<ClaimedNic> out;
  const fs::path pod = dir / "pods" / checked_name(pod_uid, "pod UID");
  std::error_code ec;
  if (!fs::is_directory(pod, ec)) return out;
  for (const auto& entry : fs::directory_iterator(pod, ec)) {
    if (entry.path().extension() != ".json" || entry.path().filename().string().front() == '.')
      continue;
    const json j = read_json(entry.path());
    try {
      for (const auto& n : j.at("nics"))
        out.push_back({n.at("claimUID").get<std::string>(), n.value("claim", ""),
                       n.at("device").get<std::string>(), n.at("pci").get<std::string>(),
                       n.value("rail", -1)});
    } catch (const json::exception& e) {
      throw std::runtime_error(entry.path().string() + ": " + e.what());
    }
  }
  std::sort(out.begin(), out.end(), [](const ClaimedNic& a, const ClaimedNic& b) {
    return std::tie(a.rail, a.pci) < std::tie(b.rail, b.pci);
  });
  return out;
}

json NetworkData::to_status() const {
  json j = {{"interfaceName", interface_name}, {"ips", ips}};
  if (!hardware_address.empty()) j["hardwareAddress"] = hardware_address;
  return j;
}

void write_network_data(const fs::path& dir, const std::string& pci, const NetworkData& d) {
  const json j = {{"podUID", d.pod_uid},
                  {"interfaceName", d.interface_name},
                  {"ips", d.ips},
                  {"hardwareAddress", d.hardware_address}};
  write_file_atomically(dir / "net" / (checked_name(pci, "PCI address") + ".json"),
                        j.dump(2) + "\n");
}

void remove_network_data(const fs::path& dir, const std::string& pci) {
  remove_file(dir / "net" / (checked_name(pci, "PCI address") + ".json"));
}

std::optional<NetworkData> read_network_data(const fs::path& dir, const std::string& pci) {
  const fs::path p = dir / "net" / (checked_name(pci, "PCI address") + ".json");
  std::error_code ec;
  if (!fs::exists(p, ec)) return std::nullopt;
  try {
    const json j = read_json(p);
    return NetworkData{j.value("podUID", ""), j.at("interfaceName").get<std::string>(),
                       j.value("ips", std::vector<std::string>{}), j.value("hardwareAddress", "")};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace railyard::dra
