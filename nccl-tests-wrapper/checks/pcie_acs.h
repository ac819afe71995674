// pcie-acs and pcie-hops: the bridges between a bundle's GPU and NIC. ACS P2P Request or
// Completion Redirect (or Source Validation) on any of them sends GPUDirect traffic up through
// the root complex; a hop that trained below its width or speed caps the bundle as a degraded
// endpoint would. ACS is read from each bridge's config space (the extended capability list,
// which only root can read beyond the first 64 bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl-tests-wrapper/checks/finding.h"
#include "topology/sysfs/pci.h"

namespace railyard::validate {

struct AcsRead {
  enum class Status { kFound, kNoCapability, kTruncated };
  Status status = Status::kNoCapability;
  uint16_t control = 0;  // ACS Control register when kFound
};

// Walks the extended capability list (from offset 0x100) of a config space image for ACS
// (capability ID 0x000D). kTruncated when the image ends before the list does.
AcsRead find_acs(std::string_view config);

// ACS Control bits by the spec's short names, lowest first: "SV RR CR".
std::string acs_bit_names(uint16_t control);
// The bits whose being on detours peer-to-peer traffic: Source Validation, P2P Request
// Redirect, P2P Completion Redirect.
constexpr uint16_t kAcsRedirectBits = 0x1 | 0x4 | 0x8;

// The bridges a packet from `a` to `b` crosses: from each side up to (and including) the
// lowest bridge they share; every bridge of both when they share none (through the root
// complex).
std::vector<topology::PciAddress> path_bridges(const topology::PciDevice& a,
                                               const topology::PciDevice& b);

// `who` names the bundle ("GPU0 <-> mlx5_0"). One finding for ACS, one for the hops' links.
std::vector<Finding> judge_bundle_path(const topology::Sysfs& sysfs, const std::string& subject,
                                       const std::string& who, const topology::PciDevice& gpu,
                                       const topology::PciDevice& nic);

}  // namespace railyard::validate
