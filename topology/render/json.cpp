#include "topology/render/json.h"

#include <cstdio>

namespace railyard::topology {
namespace {

std::string hex4(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v);
  return buf;
}

nlohmann::json opt(const auto& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json pci_json(const PciDevice& d) {
  nlohmann::json bridges = nlohmann::json::array();
  for (const auto& b : d.bridges) bridges.push_back(b.to_string());
  return {{"vendor", hex4(d.vendor)},     {"device", hex4(d.device)}, {"driver", d.driver},
          {"host_bridge", d.host_bridge}, {"bridges", bridges},       {"pcie", to_json(d.link)}};
}

nlohmann::json function_json(const NicFunction& f) {
  return {{"pci", f.pci.address.to_string()},
          {"netdev", f.netdev_name()},
          {"rdma_device", f.rdma_name()},
          {"uverbs", f.rdma && !f.rdma->uverbs.empty() ? "/dev/infiniband/" + f.rdma->uverbs : ""}};
}

nlohmann::json port_json(const RdmaPort& p) {
  nlohmann::json gids = nlohmann::json::array();
  for (const auto& g : p.gids)
    gids.push_back({{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", g.netdev}});
  return {{"port", p.number},
          {"state", p.state},
          {"phys_state", p.phys_state},
          {"rate", p.rate},
          {"rate_gbps", opt(p.rate_gbps)},
          {"link_layer", p.link_layer},
          {"gids", gids}};
}

}  // namespace

nlohmann::json to_json(const PciLink& l) {
  return {{"current_speed_gts", opt(l.current_speed_gts)},
          {"current_width", opt(l.current_width)},
          {"max_speed_gts", opt(l.max_speed_gts)},
          {"max_width", opt(l.max_width)},
          {"degraded", l.degraded()}};
}

nlohmann::json to_json(const Node& node) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : node.gpus) {
    nlohmann::json j = pci_json(g.pci);
    j["index"] = g.index;
    j["pci"] = g.pci.address.to_string();
    j["numa"] = g.pci.numa_node;
    gpus.push_back(std::move(j));
  }
  nlohmann::json nics = nlohmann::json::array();
  for (const auto& n : node.nics) {
    nlohmann::json j = pci_json(n.pf.pci);
    j.update(function_json(n.pf));
    const RdmaPort* port = n.port();
    j["rail"] = n.rail >= 0 ? nlohmann::json(n.rail) : nlohmann::json(nullptr);
    j["numa"] = n.pf.pci.numa_node;
    j["link_layer"] = port ? port->link_layer : "";
    j["state"] = port ? port->state : "";
    j["phys_state"] = port ? port->phys_state : "";
    j["rate_gbps"] = port ? opt(port->rate_gbps) : nlohmann::json(nullptr);
    j["mtu"] = n.pf.netdevs.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.pf.netdevs[0].mtu);
    nlohmann::json ports = nlohmann::json::array();
    if (n.pf.rdma)
      for (const auto& p : n.pf.rdma->ports) ports.push_back(port_json(p));
    j["ports"] = ports;
    j["total_vfs"] = n.total_vfs;
    j["num_vfs"] = n.num_vfs;
    nlohmann::json vfs = nlohmann::json::array();
    for (const auto& vf : n.vfs) vfs.push_back(function_json(vf));
    j["vfs"] = vfs;
    nics.push_back(std::move(j));
  }
  nlohmann::json bundles = nlohmann::json::array();
  for (const auto& b : node.bundles) {
    const Nic& nic = node.nics[static_cast<size_t>(b.nic)];
    bundles.push_back({{"gpu", node.gpus[static_cast<size_t>(b.gpu)].pci.address.to_string()},
                       {"gpu_index", b.gpu},
                       {"nic", nic.pf.pci.address.to_string()},
                       {"rdma_device", nic.pf.rdma_name()},
                       {"netdev", nic.pf.netdev_name()},
                       {"rail", b.rail},
                       {"path", to_string(b.path)},
                       {"nccl_path", to_string(nccl_view(b.path))}});
  }
  nlohmann::json rails = nlohmann::json::array();
  for (size_t k = 0; k < node.rails.size(); ++k) {
    const Nic& nic = node.nics[static_cast<size_t>(node.rails[k])];
    rails.push_back({{"rail", k},
                     {"pci", nic.pf.pci.address.to_string()},
                     {"rdma_device", nic.pf.rdma_name()},
                     {"netdev", nic.pf.netdev_name()}});
  }
  // Every pair of GPUs and NIC PFs, both directions.
  std::vector<const PciDevice*> all;
  for (const auto& g : node.gpus) all.push_back(&g.pci);
  for (const auto& n : node.nics) all.push_back(&n.pf.pci);
  nlohmann::json matrix = nlohmann::json::object();
  for (const PciDevice* a : all) {
    nlohmann::json row = nlohmann::json::object();
    for (const PciDevice* b : all) row[b->address.to_string()] = to_string(path_class(*a, *b));
    matrix[a->address.to_string()] = std::move(row);
  }
  nlohmann::json diags = nlohmann::json::array();
  for (const auto& d : node.diagnostics.all())
    diags.push_back({{"level", d.level == Diagnostic::Level::kError ? "error" : "warning"},
                     {"path", d.path},
                     {"message", d.message}});
  return {{"gpus", gpus},
          {"nics", nics},
          {"rails", rails},
          {"bundles", bundles},
          {"matrix", matrix},
          {"diagnostics", diags},
          {"complete", !node.diagnostics.has_errors()}};
}

}  // namespace railyard::topology
