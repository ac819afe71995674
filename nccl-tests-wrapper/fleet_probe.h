// Which leaf a NIC is cabled to, without LLDP: ask, over ARP out of that NIC alone, who holds
// the other rails' addresses. A NIC on rail k's leaf hears only rail k's peers; one that hears
// rail j's peers is plugged into leaf j. ARP stays inside the leaf's layer 2, so routing on the
// node or on the peers cannot answer for the wrong cable. Needs CAP_NET_RAW.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace railyard::validate {

// The netdev holding IPv4 `address`. Throws std::runtime_error when none does.
std::string netdev_with_address(const std::string& address);

// For each target IPv4 address, whether it answered an ARP request sent out of `netdev` from
// `source` within `wait`. Throws std::runtime_error when the probe cannot be sent.
std::vector<bool> arp_probe(const std::string& netdev, const std::string& source,
                            const std::vector<std::string>& targets,
                            std::chrono::milliseconds wait);

}  // namespace railyard::validate
