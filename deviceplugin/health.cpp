#include "deviceplugin/health.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>
#include <unordered_map>

namespace railyard::deviceplugin {
namespace {

namespace topo = railyard::topology;

std::string fn_dir(const topo::NicFunction& fn) {
  return "bus/pci/devices/" + fn.pci.address.to_string();
}

void add_port(std::vector<Probe>& out, const topo::NicFunction& fn) {
  if (!fn.rdma || fn.rdma->ports.empty()) return;
  const auto& port = fn.rdma->ports.front();
  const std::string n = std::to_string(port.number);
  // A software device (rxe) is not under its function: read it where the kernel keeps it.
  const std::string dev = fn.rdma->software ? "class/infiniband/" + fn.rdma->name
                                            : fn_dir(fn) + "/infiniband/" + fn.rdma->name;
  out.push_back({Probe::Kind::kPortActive, dev + "/ports/" + n + "/state",
                 "port " + fn.rdma->name + "/" + n, fn_dir(fn)});
}

Probe pf_port_probe(const topo::Nic& nic) {
  std::vector<Probe> p;
  add_port(p, nic.pf);
  return p.empty()
             ? Probe{Probe::Kind::kExists, fn_dir(nic.pf), "PF " + nic.pf.pci.address.to_string()}
             : p.front();
}

Probe gpu_probe(const topo::Gpu& gpu) {
  return {Probe::Kind::kExists, "bus/pci/devices/" + gpu.pci.address.to_string(),
          "GPU " + gpu.pci.address.to_string()};
}

}  // namespace

std::vector<Probe> probes_for(const topo::Node& node, const PoolDevice& dev) {
  std::vector<Probe> out;
  if (dev.fn.nic < 0) {
    if (dev.gpu >= 0) out.push_back(gpu_probe(node.gpus[static_cast<size_t>(dev.gpu)]));
    return out;
  }
  const auto& nic = node.nics[static_cast<size_t>(dev.fn.nic)];
  const auto& fn = node.function(dev.fn);
  // A function with a port needs no stat of its own: reading the port goes through its
  // directory, and only a failed read looks closer (gone, or not ACTIVE).
  if (!fn.rdma || fn.rdma->ports.empty())
    out.push_back({Probe::Kind::kExists, fn_dir(fn), "PCI function " + dev.id});
  add_port(out, fn);
  if (dev.gpu >= 0) out.push_back(gpu_probe(node.gpus[static_cast<size_t>(dev.gpu)]));
  if (dev.fn.vf >= 0) add_port(out, nic.pf);
  if (nic.link_layer() == "Ethernet" && !nic.pf.netdevs.empty()) {
    const auto& nd = nic.pf.netdevs.front().name;
    out.push_back(
        {Probe::Kind::kCarrier, fn_dir(nic.pf) + "/net/" + nd + "/operstate", "netdev " + nd});
  }
  return out;
}

HealthChecker::HealthChecker(const topo::Sysfs& sysfs, const topo::Node& node,
                             const std::vector<Pool>& pools)
    // Probes resolve from <root>/sys: each walks a few components fewer, hundreds a pass.
    : sys_fd_(::open(sysfs.sys("").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {
  for (const auto& pool : pools) {
    auto& devs =
        plan_.emplace_back(pool.resource, decltype(plan_)::value_type::second_type{}).second;
    for (const auto& d : pool.devices) devs.emplace_back(d.id, probes_for(node, d));
  }
  for (size_t k = 0; k < node.rails.size(); ++k)
    rail_ports_.emplace_back(static_cast<int>(k),
                             pf_port_probe(node.nics[static_cast<size_t>(node.rails[k])]));
}

HealthChecker::~HealthChecker() {
  if (sys_fd_ >= 0) ::close(sys_fd_);
}

bool HealthChecker::passes(const Probe& p) const {
  const char* path = p.path.c_str();
  if (p.kind == Probe::Kind::kExists) {
    struct stat st {};
    return ::fstatat(sys_fd_, path, &st, 0) == 0;  // follows the bus/pci/devices link
  }
  // Plain read(2): a pass reads one small file per VF, hundreds on a large node.
  char buf[32];
  const int fd = ::openat(sys_fd_, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  const std::string_view value(buf, static_cast<size_t>(n));
  if (p.kind == Probe::Kind::kPortActive)  // "4: ACTIVE" or "5: ACTIVE_DEFER"
    return value.starts_with("4:") || value.starts_with("5:");
  return value.starts_with("up") || value.starts_with("unknown");
}

DeviceHealth HealthChecker::failed(const Probe& p) const {
  if (p.kind == Probe::Kind::kExists) return {false, p.what + " is gone", Fault::kGone};
  if (p.kind == Probe::Kind::kCarrier)
    return {false, p.what + " has no carrier", Fault::kNoCarrier};
  // A port that cannot be read because its function left is the function's fault, not the link's.
  struct stat st {};
  if (!p.function_dir.empty() && ::fstatat(sys_fd_, p.function_dir.c_str(), &st, 0) != 0)
    return {false,
            "PCI function " + p.function_dir.substr(p.function_dir.rfind('/') + 1) + " is gone",
            Fault::kGone};
  return {false, p.what + " is not ACTIVE", Fault::kPortDown};
}

std::map<std::string, std::map<std::string, DeviceHealth>> HealthChecker::check() const {
  std::unordered_map<std::string, bool> seen;  // one read per probe path per pass
  auto cached = [&](const Probe& p) {
    auto [it, fresh] = seen.emplace(p.path, false);
    if (fresh) it->second = passes(p);
    return it->second;
  };
  std::map<std::string, std::map<std::string, DeviceHealth>> out;
  for (const auto& [resource, devices] : plan_) {
    auto& r = out[resource];
    for (const auto& [id, probes] : devices) {
      DeviceHealth h;
      for (const auto& p : probes)
        if (!cached(p)) {
          h = failed(p);
          break;
        }
      r.emplace(id, h);
    }
  }
  return out;
}

std::map<int, bool> HealthChecker::rail_links() const {
  std::map<int, bool> out;
  for (const auto& [k, probe] : rail_ports_) out[k] = passes(probe);
  return out;
}

}  // namespace railyard::deviceplugin
