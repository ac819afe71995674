// Writes a real-shaped sysfs tree from a compact description, so that tests, the demo and the
// benchmarks read the same shapes as a live node: devices nested under their bridges in
// /sys/devices/pciDDDD:BB/..., relative symlinks from bus/pci/devices, class/net,
// class/infiniband and class/infiniband_verbs, driver links, physfn/virtfnN.
//
// Description (JSON):
//   {"host_bridges": [{"id": "0000:15", "numa": 0, "ports": [SLOT, ...]}, ...]}
// "ports" are the root ports, or with "direct": true devices sit on the root bus itself (VMs).
// A SLOT is one of
//   {"gpu": {GPU}}             an NVIDIA GPU
//   {"nic": {FN}} / {"nic": [{FN}, {FN}]}   one card, one function per port (dual-port NICs)
//   {"switch": [SLOT, ...]}    a PCIe switch: upstream port, one downstream port per slot
//   {"device": {"class": "0x010802", "vendor": "144d"}}   anything else (NVMe, ...)
// FN: rdma, netdev, link_layer ("InfiniBand"|"Ethernet"), rate, state, phys_state, mtu, mac,
//     vfs (number of VFs), total_vfs, vf_netdevs (names), vf_rdma (bool, default true), link,
//     ipv4 (RoCE: the netdev's address, whose IPv4-mapped GIDs the port then lists).
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
