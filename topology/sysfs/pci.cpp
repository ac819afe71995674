#include "topology/sysfs/pci.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "topology/sysfs/parse.h"

namespace railyard::topology {

bool PciLink::degraded() const {
  if (current_width && max_width && *current_width < *max_width) return true;
  if (current_speed_gts && max_speed_gts && *current_speed_gts + 0.01 < *max_speed_gts) return true;
  return false;
}

std::string PciLink::to_string() const {
  auto gts = [](double v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return std::string(buf);
  };
  std::string w, sp;
  if (current_width) {
    w = "x" + std::to_string(*current_width);
    if (max_width && *max_width != *current_width) w += "/x" + std::to_string(*max_width);
  }
  if (current_speed_gts) {
    sp = gts(*current_speed_gts);
    if (max_speed_gts && *max_speed_gts > *current_speed_gts + 0.01)
      sp += "/" + gts(*max_speed_gts);
    sp += " GT/s";
  }
  if (w.empty() && sp.empty()) return "-";
  return w.empty() ? sp : sp.empty() ? w : w + " " + sp;
}

std::optional<double> parse_link_speed(const std::string& text) {
  // "2.5 GT/s", "8 GT/s", "16.0 GT/s PCIe", "Unknown" (no link)
  const char* b = text.c_str();
  char* end = nullptr;
  double v = std::strtod(b, &end);
  if (end == b || v <= 0) return std::nullopt;
  std::string rest(end);
  if (rest.rfind(" GT/s", 0) != 0) return std::nullopt;
  return v;
}

namespace {

// host bridge and bridge chain from ".../pci0000:17/0000:17:01.0/0000:18:00.0/<self>"
void parse_upstream(const fs::path& dir, PciDevice& dev) {
  std::vector<std::string> parts;
  for (const auto& c : dir) parts.push_back(c.string());
  if (!parts.empty()) parts.pop_back();  // the function itself
  size_t host = parts.size();
  for (size_t i = parts.size(); i-- > 0;) {
    if (parts[i].rfind("pci", 0) == 0 && parts[i].find(':') != std::string::npos) {
      host = i;
      break;
    }
  }
  if (host == parts.size()) return;  // not under a PCI host bridge (unusual virtual device)
  dev.host_bridge = parts[host];
  for (size_t i = host + 1; i < parts.size(); ++i)
    if (auto a = PciAddress::parse(parts[i])) dev.bridges.push_back(*a);
}

std::optional<PciAddress> own_address(const Sysfs& sysfs, const Dir& dir, Diagnostics& diag) {
  auto addr = PciAddress::parse(dir.path().filename().string());
  if (!addr) diag.error(sysfs.display(dir.path()), "not a PCI address");
  return addr;
}

}  // namespace

std::optional<PciDevice> read_vf_device(const Sysfs& sysfs, const Dir& dir, const PciDevice& pf,
                                        const PciDevice* sibling, Diagnostics& diag) {
  auto addr = own_address(sysfs, dir, diag);
  if (!addr) return std::nullopt;
  PciDevice dev;
  dev.address = *addr;
  if (sibling) {
    dev.vendor = sibling->vendor;
    dev.device = sibling->device;
  } else {
    auto vendor = read_hex(sysfs, dir, "vendor", diag, 0xffff);
    auto device = read_hex(sysfs, dir, "device", diag, 0xffff);
    if (!vendor || !device) return std::nullopt;
    dev.vendor = static_cast<uint16_t>(*vendor);
    dev.device = static_cast<uint16_t>(*device);
  }
  dev.class_code = pf.class_code;
  dev.numa_node = pf.numa_node;
  dev.host_bridge = pf.host_bridge;
  dev.bridges = pf.bridges;
  if (auto drv = dir.link_name("driver")) dev.driver = *drv;
  return dev;
}

std::optional<PciDevice> read_pci_device(const Sysfs& sysfs, const Dir& dir, Diagnostics& diag) {
  auto addr = own_address(sysfs, dir, diag);
  if (!addr) return std::nullopt;
  PciDevice dev;
  dev.address = *addr;
  auto vendor = read_hex(sysfs, dir, "vendor", diag, 0xffff);
  auto device = read_hex(sysfs, dir, "device", diag, 0xffff);
  auto cls = read_hex(sysfs, dir, "class", diag, 0xffffff);
  if (!vendor || !device || !cls) return std::nullopt;
  dev.vendor = static_cast<uint16_t>(*vendor);
  dev.device = static_cast<uint16_t>(*device);
  dev.class_code = *cls;
  if (auto drv = dir.link_name("driver")) dev.driver = *drv;
  parse_upstream(dir.path(), dev);

  if (Attr a = dir.read("numa_node"); a.ok()) {
    auto n = parse_int(a.value);
    if (!n || *n < -1)
      diag.error(sysfs.display(dir / "numa_node"), "garbage value '" + a.value + "'");
    else
      dev.numa_node = static_cast<int>(*n);
  } else if (a.status == Attr::Status::kUnreadable) {
    diag.error(sysfs.display(dir / "numa_node"), "unreadable: " + a.value);
  }

  auto speed = [&](const char* name) -> std::optional<double> {
    Attr a = dir.read(name);
    if (!a.ok()) return std::nullopt;  // devices without a PCIe link (integrated, virtual)
    if (a.value.rfind("Unknown", 0) == 0) return std::nullopt;
    auto v = parse_link_speed(a.value);
    if (!v) diag.warn(sysfs.display(dir / name), "unrecognised link speed '" + a.value + "'");
    return v;
  };
  auto width = [&](const char* name) -> std::optional<int> {
    Attr a = dir.read(name);
    if (!a.ok()) return std::nullopt;
    auto v = parse_int(a.value);
    if (!v || *v < 0 || *v > 32) {
      diag.warn(sysfs.display(dir / name), "unrecognised link width '" + a.value + "'");
      return std::nullopt;
    }
    if (*v == 0) return std::nullopt;  // link down
    return static_cast<int>(*v);
  };
  dev.link.current_speed_gts = speed("current_link_speed");
  dev.link.max_speed_gts = speed("max_link_speed");
  dev.link.current_width = width("current_link_width");
  dev.link.max_width = width("max_link_width");
  return dev;
}

}  // namespace railyard::topology
