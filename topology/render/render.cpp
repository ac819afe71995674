#include "topology/render/render.h"

#include <cstdio>
#include <string>
#include <vector>

namespace railyard::topology {
namespace {

// A table whose columns are as wide as their widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out, const std::string& indent = "") const {
    std::vector<size_t> width;
    for (const auto& r : rows_)
      for (size_t i = 0; i < r.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], r[i].size());
      }
    for (const auto& r : rows_) {
      std::string line = indent;
      for (size_t i = 0; i < r.size(); ++i) {
        line += r[i];
        if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
      }
      out << line << "\n";
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string numa(int n) {
  return n < 0 ? "N/A" : std::to_string(n);
}

std::string rate(const RdmaPort* p) {
  if (!p || !p->rate_gbps) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g Gb/s", *p->rate_gbps);
  return buf;
}

void print_matrix(const Node& node, std::ostream& out) {
  std::vector<std::string> names;
  std::vector<const PciDevice*> devs;
  for (const auto& g : node.gpus) {
    names.push_back("GPU" + std::to_string(g.index));
    devs.push_back(&g.pci);
  }
  for (size_t i = 0; i < node.nics.size(); ++i) {
    names.push_back("NIC" + std::to_string(i));
    devs.push_back(&node.nics[i].pf.pci);
  }
  std::vector<std::string> header{""};
  header.insert(header.end(), names.begin(), names.end());
  header.push_back("NUMA Affinity");
  Table t(header);
  for (size_t a = 0; a < devs.size(); ++a) {
    std::vector<std::string> row{names[a]};
    for (size_t b = 0; b < devs.size(); ++b)
      row.emplace_back(to_string(path_class(*devs[a], *devs[b])));
    row.push_back(numa(devs[a]->numa_node));
    t.add(std::move(row));
  }
  t.print(out);
  out << "\nLegend:\n\n"
         "  X    = Self\n"
         "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
         "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
         "Bridges within a NUMA node (NCCL counts it as PHB)\n"
         "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
         "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
         "Bridge)\n"
         "  PIX  = Connection traversing at most a single PCIe bridge\n";
  if (!node.nics.empty()) {
    out << "\nNIC Legend:\n\n";
    for (size_t i = 0; i < node.nics.size(); ++i) {
      const auto& n = node.nics[i];
      out << "  NIC" << i << ": " << n.pf.rdma_name() << " (" << n.pf.pci.address.to_string()
          << (n.pf.netdev_name().empty() ? "" : ", " + n.pf.netdev_name()) << ")\n";
    }
  }
}

void print_rails(const Node& node, std::ostream& out) {
  out << "\nRails:\n\n";
  if (node.rails.empty()) {
    out << "  no rails: no RDMA PF passes the selectors\n";
    return;
  }
  Table t({"rail", "NIC", "RDMA", "netdev", "PCI", "link layer", "state", "rate", "PCIe", "NUMA",
           "VFs"});
  for (size_t k = 0; k < node.rails.size(); ++k) {
    const size_t i = static_cast<size_t>(node.rails[k]);
    const Nic& n = node.nics[i];
    const RdmaPort* p = n.port();
    std::string pcie = n.pf.pci.link.to_string();
    if (n.pf.pci.link.degraded()) pcie += " DEGRADED";
    t.add({std::to_string(k), "NIC" + std::to_string(i), n.pf.rdma_name(),
           n.pf.netdev_name().empty() ? "-" : n.pf.netdev_name(), n.pf.pci.address.to_string(),
           p ? p->link_layer : "-", p ? p->state : "-", rate(p), pcie, numa(n.pf.pci.numa_node),
           std::to_string(n.vfs.size()) + "/" + std::to_string(n.total_vfs)});
  }
  t.print(out, "  ");
}

void print_bundles(const Node& node, std::ostream& out) {
  out << "\nBundles (GPU -> NIC):\n\n";
  if (node.bundles.empty()) {
    out << "  no bundles: the node needs GPUs and rails\n";
    return;
  }
  Table t({"GPU", "GPU PCI", "NIC", "RDMA", "rail", "path", "NCCL_IB_HCA"});
  for (const auto& b : node.bundles) {
    const Nic& n = node.nics[static_cast<size_t>(b.nic)];
    const RdmaPort* p = n.port();
    t.add({std::to_string(b.gpu), node.gpus[static_cast<size_t>(b.gpu)].pci.address.to_string(),
           "NIC" + std::to_string(b.nic), n.pf.rdma_name(), std::to_string(b.rail),
           std::string(to_string(b.path)),
           "=" + n.pf.rdma_name() + ":" + std::to_string(p ? p->number : 1)});
  }
  t.print(out, "  ");
}

}  // namespace

void render_text(const Node& node, std::ostream& out) {
  if (node.gpus.empty() && node.nics.empty()) {
    out << "No NVIDIA GPUs and no RDMA NICs found on this node: nothing to show.\n";
    return;
  }
  print_matrix(node, out);
  print_rails(node, out);
  print_bundles(node, out);
}

}  // namespace railyard::topology
