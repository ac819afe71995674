// Writes a real-shaped sysfs tree from a compact description, so that tests, the demo and the
// benchmarks read the same shapes as a live node: devices nested under their bridges in
// /sys/devices/pciDDDD:BB/..., relative symlinks from bus/pci/devices, class/net,
// class/infiniband, class/infiniband_verbs and class/misc/rdma_cm, driver links, physfn/virtfnN.
//
// Description (JSON):
//   {"host_bridges": [{"id": "0000:15", "numa": 0, "ports": [SLOT, ...]}, ...], "rdma_cm": true}
// "rdma_cm": false leaves out class/misc/rdma_cm (a node without rdma_ucm loaded).
// "ports" are the root ports, or with "direct": true devices sit on the root bus itself (VMs).
// A SLOT is one of
//   {"gpu": {GPU}}             an NVIDIA GPU
//   {"nic": {FN}} / {"nic": [{FN}, {FN}]}   one card, one function per port (dual-port NICs)
//   {"switch": [SLOT, ...]}    a PCIe switch: upstream port, one downstream port per slot;
//   {"switch": {"ports": [SLOT, ...], "acs": ["RR", "CR"]}}   with ACS Control bits on its
//                              downstream ports (every bridge has 4 KiB of config space with AER
//                              and ACS extended capabilities; ACS off unless given), and "link"
//                              for its upstream port's link
//   {"device": {"class": "0x010802", "vendor": "144d"}}   anything else (NVMe, ...)
// FN: rdma, netdev, link_layer ("InfiniBand"|"Ethernet"), rate, state, phys_state, mtu, mac,
//     vfs (number of VFs), total_vfs, vf_netdevs (names), vf_rdma (bool, default true), link,
//     ipv4 (RoCE: the netdev's address, whose IPv4-mapped GIDs the port then lists),
//     counters ({"symbol_error": 3}: a PF port's counters/ and hw_counters/, zero otherwise),
//     carrier_changes (the netdev's, default 2), ecn ({"np": [3], "rp": [3]}: the RoCE
//     priorities with ECN on, default all; false: no ecn/ directory), rdma_software ("rxe0": a
//     soft-RoCE device on the function's netdev instead of its own RDMA device, under
//     /sys/devices/virtual with a `parent` attribute, as rxe and siw are), fw_ver and board_id
//     (the RDMA device's, default "28.39.1002" and "MT_0000000838"; null: none, as rxe has).
// GPU/FN/device "link": {"width": 16, "max_width": 16, "speed": "32.0 GT/s PCIe", "max_speed"}.
// Bus numbers are given out depth-first from the host bridge's bus, as the kernel does.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace railyard::fixture {

// Throws std::runtime_error with the reason on a bad description or a failed write.
void generate(const nlohmann::json& description, const std::filesystem::path& root);
void generate_file(const std::filesystem::path& description, const std::filesystem::path& root);

}  // namespace railyard::fixture
