#include "test/fixturegen/fixture.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

namespace railyard::fixture {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void write(const fs::path& p, const std::string& value) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p);
  out << value << "\n";
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

// A relative symlink, as the kernel's sysfs has them.
void link(const fs::path& at, const fs::path& target) {
  fs::create_directories(at.parent_path());
  fs::create_directory_symlink(target.lexically_relative(at.parent_path()), at);
}

std::string bdf(uint32_t domain, uint32_t bus, uint32_t dev, uint32_t fn) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return buf;
}

std::string hex(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, v);
  return buf;
}

class Generator {
 public:
  Generator(fs::path root) : root_(std::move(root)), sys_(root_ / "sys") {}

  void run(const json& desc) {
    if (!desc.is_object() || !desc.contains("host_bridges") || !desc["host_bridges"].is_array())
      throw std::runtime_error("description needs a 'host_bridges' list");
    reserve_rdma_names(desc);
    std::set<int> numa_nodes;
    for (const auto& hb : desc["host_bridges"]) {
      const std::string id = hb.at("id").get<std::string>();
      unsigned domain = 0, bus = 0;
      if (std::sscanf(id.c_str(), "%x:%x", &domain, &bus) != 2)
        throw std::runtime_error("host bridge id '" + id + "' is not DDDD:BB");
      numa_ = hb.value("numa", -1);
      if (numa_ >= 0) numa_nodes.insert(numa_);
      domain_ = domain;
      next_bus_ = bus + 1;
      const fs::path dir = sys_ / "devices" / ("pci" + id);
      fs::create_directories(dir);
      const json& ports = hb.at("ports");
      const bool direct = hb.value("direct", false);
      for (size_t i = 0; i < ports.size(); ++i) {
        if (direct) {
          slot(ports[i], dir, bus, static_cast<uint32_t>(i + 1));
        } else {
          const auto rp = bridge(dir, bus, static_cast<uint32_t>(i + 1), 0, "8086", "pcieport");
          slot(ports[i], rp.first, rp.second, 0);
        }
      }
    }
    for (int n : numa_nodes)
      write(sys_ / "devices/system/node" / ("node" + std::to_string(n)) / "cpulist",
            std::to_string(n * 56) + "-" + std::to_string(n * 56 + 55));
    fs::create_directories(sys_ / "class/net");
    fs::create_directories(sys_ / "class/infiniband");
    // The RDMA connection manager's device, there once rdma_ucm is loaded (rdma-core's udev
    // rules load it on a node with RDMA).
    if (desc.value("rdma_cm", true)) {
      write(sys_ / "devices/virtual/misc/rdma_cm/dev", "10:58");
      link(sys_ / "class/misc/rdma_cm", sys_ / "devices/virtual/misc/rdma_cm");
    }
  }

 private:
  fs::path root_, sys_;
  uint32_t domain_ = 0, next_bus_ = 0;
  int numa_ = -1;
  int next_rdma_ = 0, next_uverbs_ = 0;
  std::set<std::string> taken_rdma_;

  // VFs get mlx5_N names after every name the description gives explicitly, as on a real node
  // where the PFs probe first.
  void reserve_rdma_names(const json& j) {
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) {
        if (k == "rdma" && v.is_string()) {
          taken_rdma_.insert(v.get<std::string>());
          int n;
          if (std::sscanf(v.get<std::string>().c_str(), "mlx5_%d", &n) == 1)
            next_rdma_ = std::max(next_rdma_, n + 1);
        } else {
          reserve_rdma_names(v);
        }
      }
    } else if (j.is_array()) {
      for (const auto& v : j) reserve_rdma_names(v);
    }
  }

  uint32_t take_bus() {
    if (next_bus_ > 0xff) throw std::runtime_error("fixture needs more than 256 buses in a domain");
    return next_bus_++;
  }

  fs::path function(const fs::path& parent, const std::string& addr, const std::string& vendor,
                    const std::string& device, uint32_t cls, const std::string& driver,
                    const json& link_desc, bool with_link) {
    const fs::path dir = parent / addr;
    write(dir / "vendor", "0x" + vendor);
    write(dir / "device", "0x" + device);
    write(dir / "class", hex(cls, 6));
    write(dir / "numa_node", std::to_string(numa_));
    if (with_link) {
      const int width = link_desc.value("width", 16);
      const std::string speed = link_desc.value("speed", std::string("32.0 GT/s PCIe"));
      write(dir / "current_link_width", std::to_string(width));
      write(dir / "max_link_width", std::to_string(link_desc.value("max_width", width)));
      write(dir / "current_link_speed", speed);
      write(dir / "max_link_speed", link_desc.value("max_speed", speed));
    }
    if (!driver.empty()) {
      fs::create_directories(sys_ / "bus/pci/drivers" / driver);
      link(dir / "driver", sys_ / "bus/pci/drivers" / driver);
    }
    link(sys_ / "bus/pci/devices" / addr, dir);
    return dir;
  }

  // A bridge at bus:dev.fn; returns its directory and its secondary bus. `acs`: the ACS
  // Control bits its config space shows.
  std::pair<fs::path, uint32_t> bridge(const fs::path& parent, uint32_t bus, uint32_t dev,
                                       uint32_t fn, const std::string& vendor,
                                       const std::string& driver, uint16_t acs = 0,
                                       const json& link_desc = json::object()) {
    const fs::path dir = function(parent, bdf(domain_, bus, dev, fn), vendor, "1234", 0x060400,
                                  driver, link_desc, true);
    write_bridge_config(dir / "config", vendor, acs);
    return {dir, take_bus()};
  }

  // 4 KiB of config space as root reads it: a type 1 header, the PCI Express capability, and
  // in extended space AER (0x100) then ACS (0x148), so readers walk a real chain.
  static void write_bridge_config(const fs::path& p, const std::string& vendor, uint16_t acs) {
    std::string c(4096, '\0');
    auto put16 = [&](size_t at, uint16_t v) {
      c[at] = static_cast<char>(v & 0xff);
      c[at + 1] = static_cast<char>(v >> 8);
    };
    auto put32 = [&](size_t at, uint32_t v) {
      put16(at, static_cast<uint16_t>(v & 0xffff));
      put16(at + 2, static_cast<uint16_t>(v >> 16));
    };
    put16(0x00, static_cast<uint16_t>(std::stoul(vendor, nullptr, 16)));
    put16(0x02, 0x1234);
    put16(0x06, 0x0010);  // status: capabilities list
    c[0x0e] = 0x01;       // header type 1: a bridge
    c[0x34] = 0x40;
    put16(0x40, 0x0010);                             // PCI Express capability, last in the list
    put32(0x100, 0x0001 | 1u << 16 | 0x148u << 20);  // AER, version 1, next 0x148
    put32(0x148, 0x000d | 1u << 16);                 // ACS, version 1, last
    put16(0x14c, 0x007f);                            // ACS Capability: every control there is
    put16(0x14e, acs);
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(c.data(), static_cast<std::streamsize>(c.size()));
    if (!out) throw std::runtime_error("cannot write " + p.string());
  }

  // "SV", "TB", "RR", "CR", "UF", "EC", "DT": the ACS Control bits in the spec's order.
  static uint16_t acs_bits(const json& names) {
    static const char* order[] = {"SV", "TB", "RR", "CR", "UF", "EC", "DT"};
    uint16_t bits = 0;
    for (const auto& n : names) {
      const auto* it = std::find(std::begin(order), std::end(order), n.get<std::string>());
      if (it == std::end(order)) throw std::runtime_error("unknown ACS bit " + n.dump());
      bits = static_cast<uint16_t>(bits | 1u << (it - std::begin(order)));
    }
    return bits;
  }

  void slot(const json& s, const fs::path& parent, uint32_t bus, uint32_t dev) {
    if (!s.is_object() || s.size() != 1)
      throw std::runtime_error("a slot is one of {gpu}, {nic}, {switch}, {device}: " + s.dump());
    const std::string kind = s.begin().key();
    const json& body = s.begin().value();
    if (kind == "switch") {
      // [SLOT, ...], or {"ports": [SLOT, ...], "acs": ["RR", ...]} for ACS on its downstream ports
      const json& ports = body.is_object() ? body.at("ports") : body;
      const uint16_t acs = body.is_object() ? acs_bits(body.value("acs", json::array())) : 0;
      auto up = bridge(parent, bus, dev, 0, "1000", "pcieport", 0,
                       body.is_object() ? body.value("link", json::object()) : json::object());
      for (size_t i = 0; i < ports.size(); ++i) {
        auto down =
            bridge(up.first, up.second, static_cast<uint32_t>(i), 0, "1000", "pcieport", acs);
        slot(ports[i], down.first, down.second, 0);
      }
    } else if (kind == "gpu") {
      function(parent, bdf(domain_, bus, dev, 0), "10de", body.value("device", std::string("2330")),
               0x030200, body.value("driver", std::string("nvidia")),
               body.value("link", json::object()), true);
    } else if (kind == "device") {
      function(parent, bdf(domain_, bus, dev, 0), body.value("vendor", std::string("144d")),
               body.value("device", std::string("a80a")),
               static_cast<uint32_t>(
                   std::stoul(body.value("class", std::string("0x010802")), nullptr, 16)),
               body.value("driver", std::string("nvme")), body.value("link", json::object()), true);
    } else if (kind == "nic") {
      const json fns = body.is_array() ? body : json::array({body});
      for (size_t f = 0; f < fns.size(); ++f)
        nic(fns[f], parent, bus, dev, static_cast<uint32_t>(f));
    } else {
      throw std::runtime_error("unknown slot kind '" + kind + "'");
    }
  }

  std::string mac_for(uint32_t bus, uint32_t devfn, int vf) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "02:%02x:%02x:%02x:%02x:%02x", domain_ & 0xff, bus, devfn,
                  (vf + 1) >> 8, (vf + 1) & 0xff);
    return buf;
  }

  std::string next_rdma_name() {
    std::string name;
    do name = "mlx5_" + std::to_string(next_rdma_++);
    while (taken_rdma_.count(name));
    return name;
  }

  void netdev(const fs::path& fn_dir, const std::string& name, const std::string& mac, int mtu,
              bool ib, const std::string& operstate, const json& fn = json::object()) {
    const fs::path dir = fn_dir / "net" / name;
    write(dir / "address", mac);
    write(dir / "mtu", std::to_string(mtu));
    write(dir / "operstate", operstate);
    write(dir / "type", ib ? "32" : "1");
    write(dir / "carrier_changes", std::to_string(fn.value("carrier_changes", 2)));
    write(dir / "statistics/tx_bytes", "0");
    write(dir / "statistics/rx_bytes", "0");
    // mlx5's RoCE ECN switches, one file per priority: "ecn": {"np": [3], "rp": [3]} lists the
    // enabled ones (default all, as the driver starts), "ecn": false leaves them out.
    const json ecn = fn.value("ecn", json::object());
    if (!ib && !ecn.is_boolean())
      for (const char* role : {"np", "rp"}) {
        const json on = ecn.value(role, json::array({0, 1, 2, 3, 4, 5, 6, 7}));
        for (int p = 0; p < 8; ++p)
          write(dir / "ecn" / (std::string("roce_") + role) / "enable" / std::to_string(p),
                std::find(on.begin(), on.end(), p) != on.end() ? "1" : "0");
      }
    link(dir / "device", fn_dir);  // as the kernel: class/net/<dev>/device -> the function
    link(sys_ / "class/net" / name, dir);
  }

  // A port's error and traffic counters (PMA counters/ and the driver's hw_counters/), zero
  // unless "counters": {"symbol_error": 3, ...} says otherwise.
  static void port_counters(const fs::path& port, const json& fn) {
    const json given = fn.value("counters", json::object());
    auto value = [&](const std::string& n) { return std::to_string(given.value(n, 0)); };
    for (const char* n :
         {"symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
          "port_xmit_discards", "local_link_integrity_errors", "excessive_buffer_overrun_errors",
          "port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets"})
      write(port / "counters" / n, value(n));
    for (const char* n : {"out_of_sequence", "packet_seq_err", "roce_adp_retrans", "np_cnp_sent",
                          "rp_cnp_handled", "local_ack_timeout_err"})
      write(port / "hw_counters" / n, value(n));
  }

  // `software`: rxe/siw, under /sys/devices/virtual with a `parent` attribute naming its netdev
  // and no `device` link, as the kernel shows a device with no PCI parent.
  void rdma(const fs::path& fn_dir, const std::string& name, const json& fn, bool ib,
            const std::string& netdev_name, const std::string& mac, bool with_port,
            bool with_counters = false, bool software = false) {
    const fs::path parent = software ? sys_ / "devices/virtual" : fn_dir;
    const fs::path dev = parent / "infiniband" / name;
    write(dev / "node_type", "1: CA");
    if (software) {
      write(dev / "parent", netdev_name);
    } else {
      link(dev / "device", fn_dir);  // as the kernel: class/infiniband/<dev>/device -> the function
      // mlx5's: the firmware and the board's PSID (null: the driver shows none).
      for (const auto& [key, dflt] : {std::pair<const char*, const char*>{"fw_ver", "28.39.1002"},
                                      {"board_id", "MT_0000000838"}})
        if (!fn.contains(key) || !fn[key].is_null())
          write(dev / key, fn.value(key, std::string(dflt)));
    }
    if (with_port) {
      const fs::path port = dev / "ports/1";
      const std::string state = fn.value("state", std::string("ACTIVE"));
      static const std::map<std::string, int> codes = {
          {"DOWN", 1}, {"INIT", 2}, {"ARMED", 3}, {"ACTIVE", 4}, {"ACTIVE_DEFER", 5}};
      auto code = codes.find(state);
      if (code == codes.end()) throw std::runtime_error("unknown port state '" + state + "'");
      write(port / "state", std::to_string(code->second) + ": " + state);
      const std::string phys =
          fn.value("phys_state", std::string(state == "ACTIVE" ? "LinkUp" : "Disabled"));
      write(port / "phys_state", std::string(phys == "LinkUp" ? "5" : "3") + ": " + phys);
      write(port / "rate",
            fn.value("rate", std::string(ib ? "400 Gb/sec (4X NDR)" : "400 Gb/sec (4X HDR)")));
      write(port / "link_layer", ib ? "InfiniBand" : "Ethernet");
      if (with_counters) port_counters(port, fn);
      // A few GID entries, the unused ones all zero as the kernel shows them.
      const std::string iid = mac.substr(0, 2) + mac.substr(3, 2) + ":" + mac.substr(6, 2) +
                              "ff:fe" + mac.substr(9, 2) + ":" + mac.substr(12, 2) +
                              mac.substr(15, 2);
      const std::string zero = "0000:0000:0000:0000:0000:0000:0000:0000";
      for (int i = 0; i < 4; ++i) {
        const std::string idx = std::to_string(i);
        const bool used = ib ? i == 0 : i < 2;
        write(port / "gids" / idx, used ? "fe80:0000:0000:0000:" + iid : zero);
        if (!used) continue;
        write(port / "gid_attrs/types" / idx, i == 1 ? "RoCE v2" : "IB/RoCE v1");
        if (!ib) write(port / "gid_attrs/ndevs" / idx, netdev_name);
      }
      // An IPv4 address on a RoCE netdev: the kernel adds its IPv4-mapped GID, v1 and v2.
      if (const std::string v4 = fn.value("ipv4", std::string()); !ib && !v4.empty()) {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (std::sscanf(v4.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) != 4)
          throw std::runtime_error("ipv4 '" + v4 + "' is not an IPv4 address");
        char gid[64];
        std::snprintf(gid, sizeof gid, "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a, b, c,
                      d);
        for (int i : {2, 3}) {
          const std::string idx = std::to_string(i);
          write(port / "gids" / idx, gid);
          write(port / "gid_attrs/types" / idx, i == 3 ? "RoCE v2" : "IB/RoCE v1");
          write(port / "gid_attrs/ndevs" / idx, netdev_name);
        }
      }
    }
    link(sys_ / "class/infiniband" / name, dev);
    const std::string uv = "uverbs" + std::to_string(next_uverbs_++);
    const fs::path uvdir = parent / "infiniband_verbs" / uv;
    write(uvdir / "ibdev", name);
    write(uvdir / "dev", "231:" + std::to_string(192 + next_uverbs_ - 1));
    link(sys_ / "class/infiniband_verbs" / uv, uvdir);
  }

  void nic(const json& fn, const fs::path& parent, uint32_t bus, uint32_t dev, uint32_t func) {
    const bool ib = fn.value("link_layer", std::string("InfiniBand")) == "InfiniBand";
    const std::string addr = bdf(domain_, bus, dev, func);
    const fs::path dir = function(parent, addr, fn.value("vendor", std::string("15b3")),
                                  fn.value("device", std::string("1021")), ib ? 0x020700 : 0x020000,
                                  fn.value("driver", std::string("mlx5_core")),
                                  fn.value("link", json::object()), true);
    const uint32_t devfn = dev << 3 | func;
    const std::string mac = fn.value("mac", mac_for(bus, devfn, -1));
    const std::string nd = fn.value("netdev", std::string());
    const std::string operstate =
        fn.value("state", std::string("ACTIVE")) == "ACTIVE" ? "up" : "down";
    if (!nd.empty()) netdev(dir, nd, mac, fn.value("mtu", ib ? 4092 : 9000), ib, operstate, fn);
    if (const std::string soft = fn.value("rdma_software", std::string()); !soft.empty()) {
      if (nd.empty()) throw std::runtime_error("rdma_software '" + soft + "' needs a netdev");
      rdma(dir, soft, fn, false, nd, mac, true, true, true);
    } else if (fn.value("rdma_device", true))
      rdma(dir, fn.contains("rdma") ? fn["rdma"].get<std::string>() : next_rdma_name(), fn, ib, nd,
           mac, true, true);

    const int vfs = fn.value("vfs", 0);
    const int total = fn.value("total_vfs", std::max(vfs, 16));
    write(dir / "sriov_totalvfs", std::to_string(total));
    write(dir / "sriov_numvfs", std::to_string(vfs));
    const json vf_names = fn.value("vf_netdevs", json::array());
    // Routing ID = PF's + offset + index (stride 1), with room for each function's VFs.
    const uint32_t first = (bus << 8 | devfn) + 2 + func * static_cast<uint32_t>(total);
    for (int i = 0; i < vfs; ++i) {
      const uint32_t rid = first + static_cast<uint32_t>(i);
      const std::string vaddr = bdf(domain_, rid >> 8, (rid >> 3) & 0x1f, rid & 7);
      const fs::path vdir =
          function(parent, vaddr, "15b3", fn.value("vf_device", std::string("101e")),
                   ib ? 0x020700 : 0x020000, "mlx5_core", json::object(), false);
      link(vdir / "physfn", dir);
      link(dir / ("virtfn" + std::to_string(i)), vdir);
      const std::string vnd = i < static_cast<int>(vf_names.size())
                                  ? vf_names[static_cast<size_t>(i)].get<std::string>()
                                  : (nd.empty() ? "" : nd + "v" + std::to_string(i));
      const std::string vmac = mac_for(bus, devfn, i);
      if (!vnd.empty())  // VFs: no ECN switches of their own
        netdev(vdir, vnd, vmac, ib ? 4092 : 9000, ib, "up", json{{"ecn", false}});
      if (fn.value("vf_rdma", true)) rdma(vdir, next_rdma_name(), fn, ib, vnd, vmac, true);
    }
  }
};

}  // namespace

void generate(const json& description, const fs::path& root) {
  try {
    Generator(root).run(description);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("bad fixture description: ") + e.what());
  } catch (const fs::filesystem_error& e) {
    throw std::runtime_error(std::string("cannot write the fixture: ") + e.what());
  }
}

void generate_file(const fs::path& description, const fs::path& root) {
  std::ifstream in(description);
  if (!in) throw std::runtime_error("cannot read " + description.string());
  json j;
  try {
    j = json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(description.string() + ": " + e.what());
  }
  generate(j, root);
}

}  // namespace railyard::fixture
