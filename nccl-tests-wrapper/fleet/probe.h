// Which leaf a NIC is cabled to, without LLDP: ask, over ARP out of that NIC alone, who holds
// the peers' rail addresses, and note which MAC answers. A NIC on rail k's leaf hears only NICs
// of rail k; one that hears rail j's NICs is plugged into leaf j. ARP stays inside the leaf's
// layer 2, so routing on the node or on the peers cannot answer for the wrong cable; and since
// the answering MAC is what counts, not the address asked for, a peer whose NICs answer for each
// other's addresses (the kernel's default arp_ignore=0) still shows which NIC is on the leaf.
// Needs CAP_NET_RAW.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace railyard::validate {

// A netdev's MAC address, "aa:bb:cc:dd:ee:ff". Throws std::runtime_error naming it.
std::string mac_address(const std::string& netdev);

// For each target IPv4 address, the MAC that answered an ARP request sent out of `netdev` from
// `source` within `wait` (empty: no answer). Throws std::runtime_error when the probe cannot be
// sent (the NIC is down, say).
std::vector<std::string> arp_probe(const std::string& netdev, const std::string& source,
                                   const std::vector<std::string>& targets,
                                   std::chrono::milliseconds wait);

}  // namespace railyard::validate
