#include "nccl-tests-wrapper/checks/pcie_acs.h"

#include <fstream>
#include <iterator>

namespace railyard::validate {
namespace topo = railyard::topology;

namespace {

uint32_t le32(std::string_view c, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(c[at + i])) << (8 * i);
  return v;
}

std::string read_binary(const std::filesystem::path& p, bool& readable) {
  std::ifstream in(p, std::ios::binary);
  readable = static_cast<bool>(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

AcsRead find_acs(std::string_view config) {
  size_t at = 0x100;
  for (int hops = 0; at != 0 && hops < 64; ++hops) {  // a looping list is a broken device
    if (at + 8 > config.size()) return {AcsRead::Status::kTruncated, 0};
    const uint32_t header = le32(config, at);
    if (header == 0 || header == 0xffffffff) return {};  // no extended capabilities
    if ((header & 0xffff) == 0x000d)
      return {AcsRead::Status::kFound, static_cast<uint16_t>(le32(config, at + 4) >> 16)};
    at = (header >> 20) & 0xffc;
  }
  return {};
}

std::string acs_bit_names(uint16_t control) {
  static const char* names[] = {"SV", "TB", "RR", "CR", "UF", "EC", "DT"};
  std::string out;
  for (int i = 0; i < 7; ++i)
    if (control & (1u << i)) out += (out.empty() ? "" : " ") + std::string(names[i]);
  return out;
}

std::vector<topo::PciAddress> path_bridges(const topo::PciDevice& a, const topo::PciDevice& b) {
  size_t common = 0;
  if (a.host_bridge == b.host_bridge)
    while (common < a.bridges.size() && common < b.bridges.size() &&
           a.bridges[common] == b.bridges[common])
      ++common;
  // Up from `a` (its bridges are root first), then down to `b`.
  std::vector<topo::PciAddress> path(a.bridges.rbegin(),
                                     a.bridges.rend() - static_cast<long>(common));
  if (common > 0) path.push_back(a.bridges[common - 1]);
  path.insert(path.end(), b.bridges.begin() + static_cast<long>(common), b.bridges.end());
  return path;
}

std::vector<Finding> judge_bundle_path(const topo::Sysfs& sysfs, const std::string& subject,
                                       const std::string& who, const topo::PciDevice& gpu,
                                       const topo::PciDevice& nic) {
  std::string redirect, cannot, slow, hops;
  nlohmann::json path = nlohmann::json::array(), acs_of = nlohmann::json::object(),
                 unreadable = nlohmann::json::array(), links = nlohmann::json::object();
  for (const auto& addr : path_bridges(gpu, nic)) {
    const std::string name = addr.to_string();
    hops += (hops.empty() ? "" : ", ") + name;
    path.push_back(name);
    const auto dir = sysfs.sys("bus/pci/devices/" + name);
    bool readable = false;
    const std::string config = read_binary(dir / "config", readable);
    const AcsRead acs = find_acs(config);
    if (acs.status == AcsRead::Status::kFound) acs_of[name] = acs_bit_names(acs.control);
    if (!readable || acs.status == AcsRead::Status::kTruncated) {
      unreadable.push_back(name);
      cannot +=
          (cannot.empty() ? "" : ", ") + name + " (" +
          (readable ? std::to_string(config.size()) + " bytes of config space" : "no config") + ")";
    } else if (acs.status == AcsRead::Status::kFound && (acs.control & kAcsRedirectBits)) {
      redirect += (redirect.empty() ? "" : "; ") + name + ": " + acs_bit_names(acs.control);
    }
    if (auto d = sysfs.open_dir(dir)) {
      topo::Diagnostics diag;
      if (auto pci = topo::read_pci_device(sysfs, *d, diag)) {
        links[name] = pci->link.to_string();
        if (pci->link.degraded())
          slow += (slow.empty() ? "" : ", ") + name + " " + pci->link.to_string();
      }
    }
  }
  const std::string via = who + " via " + (hops.empty() ? "no bridge" : hops);
  Finding acs_finding =
      !redirect.empty()
          ? Finding::judged(
                subject, "pcie-acs", false,
                via + ": ACS redirects peer-to-peer traffic through the root complex at " +
                    redirect)
      : !cannot.empty()
          ? Finding::unknown_because(subject, "pcie-acs",
                                     via + ": cannot read the ACS capability of " + cannot +
                                         "; extended config space needs root")
          : Finding::judged(subject, "pcie-acs", true, via + ": no ACS redirect");
  acs_finding.with({{"bridges", path}, {"acs", acs_of}, {"unreadable", unreadable}});
  Finding hop_finding =
      Finding::judged(subject, "pcie-hops", slow.empty(),
                      slow.empty() ? via + ": every hop at its full link"
                                   : via + ": hop trained below its link: " + slow);
  hop_finding.with({{"bridges", path}, {"links", links}});
  return {acs_finding, hop_finding};
}

}  // namespace railyard::validate
