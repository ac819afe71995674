#include "topology/sysfs/rdma.h"

#include <cstdlib>

#include "topology/sysfs/parse.h"

namespace railyard::topology {

std::optional<double> parse_rate_gbps(const std::string& text) {
  const char* b = text.c_str();
  char* end = nullptr;
  double v = std::strtod(b, &end);
  if (end == b || v < 0 || std::string(end).rfind(" Gb/sec", 0) != 0) return std::nullopt;
  return v;
}

namespace {

// "4: ACTIVE" -> {4, "ACTIVE"}
bool parse_coded(const std::string& s, int& code, std::string& name) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos) return false;
  auto c = parse_int(s.substr(0, colon));
  if (!c) return false;
  code = static_cast<int>(*c);
  name = s.substr(colon + 1);
  while (!name.empty() && name.front() == ' ') name.erase(name.begin());
  return !name.empty();
}

bool zero_gid(const std::string& g) {
  for (char c : g)
    if (c != '0' && c != ':') return false;
  return true;
}

void read_gids(const Dir& port_dir, RdmaPort& port) {
  for (const auto& name : port_dir.list("gids")) {
    auto idx = parse_int(name);
    if (!idx) continue;
    Attr g = port_dir.read("gids/" + name);
    if (!g.ok() || zero_gid(g.value)) continue;
    Gid gid{static_cast<int>(*idx), g.value, {}, {}};
    // Unused and some IB entries return EINVAL here: absence of a type is normal.
    if (Attr t = port_dir.read("gid_attrs/types/" + name); t.ok()) gid.type = t.value;
    if (Attr n = port_dir.read("gid_attrs/ndevs/" + name); n.ok()) gid.netdev = n.value;
    port.gids.push_back(std::move(gid));
  }
}

std::optional<RdmaPort> read_port(const Sysfs& sysfs, const Dir& dir, int number, bool with_gids,
                                  Diagnostics& diag) {
  RdmaPort port;
  port.number = number;
  Attr state = dir.read("state");
  if (!state.ok() || !parse_coded(state.value, port.state_code, port.state)) {
    diag.error(sysfs.display(dir / "state"),
               state.ok() ? "garbage value '" + state.value + "'" : "missing or unreadable");
    return std::nullopt;
  }
  int phys_code = 0;
  if (Attr a = dir.read("phys_state"); a.ok() && !parse_coded(a.value, phys_code, port.phys_state))
    diag.warn(sysfs.display(dir / "phys_state"), "garbage value '" + a.value + "'");
  if (Attr a = dir.read("rate"); a.ok()) {
    port.rate = a.value;
    port.rate_gbps = parse_rate_gbps(a.value);
    if (!port.rate_gbps) diag.warn(sysfs.display(dir / "rate"), "garbage value '" + a.value + "'");
  }
  if (Attr a = dir.read("link_layer"); a.ok()) port.link_layer = a.value;
  if (port.link_layer != "InfiniBand" && port.link_layer != "Ethernet")
    diag.warn(sysfs.display(dir / "link_layer"), "unknown link layer '" + port.link_layer + "'");
  if (with_gids) read_gids(dir, port);
  return port;
}

}  // namespace

std::string rdma_netdev(const Sysfs& sysfs, const std::string& device, int port) {
  const auto dev = sysfs.open_dir(sysfs.sys("class/infiniband/" + device));
  if (!dev) return "";
  if (const auto fn = sysfs.open_dir(sysfs.sys("class/infiniband/" + device + "/device"))) {
    const auto nets = fn->list("net");
    if (!nets.empty()) return nets.front();
  }
  if (Attr p = dev->read("parent"); p.ok() && !p.value.empty()) return p.value;
  const std::string ndevs = "ports/" + std::to_string(port) + "/gid_attrs/ndevs";
  for (const auto& idx : dev->list(ndevs))
    if (Attr n = dev->read(ndevs + "/" + idx); n.ok() && !n.value.empty()) return n.value;
  return "";
}

std::string rdma_device_of_netdev(const Sysfs& sysfs, const std::string& netdev) {
  if (const auto fn = sysfs.open_dir(sysfs.sys("class/net/" + netdev + "/device")))
    if (const auto devs = fn->list("infiniband"); devs.size() == 1) return devs.front();
  if (const auto cls = sysfs.open_dir(sysfs.sys("class/infiniband")))
    for (const auto& d : cls->list("."))
      if (!sysfs.open_dir(sysfs.sys("class/infiniband/" + d + "/device")) &&
          rdma_netdev(sysfs, d) == netdev)
        return d;
  return "";
}

std::optional<Dir> rdma_parent_dir(const Sysfs& sysfs, const std::string& device) {
  if (auto fn = sysfs.open_dir(sysfs.sys("class/infiniband/" + device + "/device"))) return fn;
  if (!sysfs.open_dir(sysfs.sys("class/infiniband/" + device))) return std::nullopt;
  return sysfs.open_dir(sysfs.sys("devices/virtual"));
}

std::vector<RdmaDevice> read_rdma_devices(const Sysfs& sysfs, const Dir& pci_dir, bool with_ports,
                                          bool with_gids, Diagnostics& diag) {
  std::vector<RdmaDevice> out;
  for (const auto& name : pci_dir.list("infiniband")) {
    RdmaDevice dev;
    dev.name = name;
    if (Attr fw = pci_dir.read("infiniband/" + name + "/fw_ver"); fw.ok()) dev.fw_ver = fw.value;
    if (Attr board = pci_dir.read("infiniband/" + name + "/board_id"); board.ok())
      dev.board_id = board.value;
    if (with_ports) {
      const std::string ports = "infiniband/" + name + "/ports";
      for (const auto& p : pci_dir.list(ports)) {
        auto num = parse_int(p);
        if (!num || *num < 1) {
          diag.warn(sysfs.display(pci_dir / ports / p), "not a port number");
          continue;
        }
        auto port_dir = sysfs.open_dir(pci_dir / ports / p);
        if (!port_dir) continue;
        if (auto port = read_port(sysfs, *port_dir, static_cast<int>(*num), with_gids, diag))
          dev.ports.push_back(std::move(*port));
      }
    }
    out.push_back(std::move(dev));
  }
  // uverbsN entries name their RDMA device in "ibdev".
  for (const auto& uv : pci_dir.list("infiniband_verbs")) {
    const std::string rel = "infiniband_verbs/" + uv + "/ibdev";
    Attr ibdev = pci_dir.read(rel);
    if (!ibdev.ok()) {
      diag.warn(sysfs.display(pci_dir / rel), "missing or unreadable");
      continue;
    }
    for (auto& d : out)
      if (d.name == ibdev.value) d.uverbs = uv;
  }
  return out;
}

}  // namespace railyard::topology
