#include "nccl-tests-wrapper/fleet/probe.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "common/fd.h"

namespace railyard::validate {
namespace {

struct ArpPacket {  // RFC 826 for Ethernet and IPv4, as on the wire
  uint16_t htype, ptype;
  uint8_t hlen, plen;
  uint16_t op;
  uint8_t sha[6], spa[4], tha[6], tpa[4];
} __attribute__((packed));

in_addr ipv4(const std::string& text) {
  in_addr a{};
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1)
    throw std::runtime_error("'" + text + "' is not an IPv4 address");
  return a;
}

std::string sys_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

std::string mac_text(const uint8_t* mac) {
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                mac[4], mac[5]);
  return text;
}

}  // namespace

std::string mac_address(const std::string& netdev) {
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, netdev.c_str(), IFNAMSIZ - 1);
  if (fd.get() < 0 || ::ioctl(fd.get(), SIOCGIFHWADDR, &ifr) != 0)
    throw std::runtime_error(sys_error("MAC address of " + netdev));
  return mac_text(reinterpret_cast<const uint8_t*>(ifr.ifr_hwaddr.sa_data));
}

std::vector<std::string> arp_probe(const std::string& netdev, const std::string& source,
                                   const std::vector<std::string>& targets,
                                   std::chrono::milliseconds wait) {
  const unsigned index = ::if_nametoindex(netdev.c_str());
  if (index == 0) throw std::runtime_error(sys_error("netdev " + netdev));
  Fd fd(::socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ARP)));
  if (fd.get() < 0) throw std::runtime_error(sys_error("ARP socket (needs CAP_NET_RAW)"));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, netdev.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd.get(), SIOCGIFHWADDR, &ifr) != 0)
    throw std::runtime_error(sys_error("MAC address of " + netdev));
  sockaddr_ll here{};
  here.sll_family = AF_PACKET;
  here.sll_protocol = htons(ETH_P_ARP);
  here.sll_ifindex = static_cast<int>(index);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&here), sizeof here) != 0)
    throw std::runtime_error(sys_error("bind to " + netdev));

  const in_addr from = ipv4(source);
  std::map<uint32_t, size_t> wanted;  // target address -> index
  for (size_t i = 0; i < targets.size(); ++i) wanted[ipv4(targets[i]).s_addr] = i;
  sockaddr_ll broadcast = here;
  broadcast.sll_halen = 6;
  std::memset(broadcast.sll_addr, 0xff, 6);
  for (const auto& [target, i] : wanted) {
    ArpPacket p{};
    p.htype = htons(ARPHRD_ETHER);
    p.ptype = htons(ETH_P_IP);
    p.hlen = 6;
    p.plen = 4;
    p.op = htons(ARPOP_REQUEST);
    std::memcpy(p.sha, ifr.ifr_hwaddr.sa_data, 6);
    std::memcpy(p.spa, &from.s_addr, 4);
    std::memcpy(p.tpa, &target, 4);
    if (::sendto(fd.get(), &p, sizeof p, 0, reinterpret_cast<sockaddr*>(&broadcast),
                 sizeof broadcast) != static_cast<ssize_t>(sizeof p))
      throw std::runtime_error(sys_error("ARP request out of " + netdev));
  }

  std::vector<std::string> answered(targets.size());
  const auto deadline = std::chrono::steady_clock::now() + wait;
  size_t left = wanted.size();
  while (left > 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    pollfd pfd{fd.get(), POLLIN, 0};
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    if (::poll(&pfd, 1, static_cast<int>(ms) + 1) <= 0) continue;
    ArpPacket p{};
    if (::recv(fd.get(), &p, sizeof p, 0) != static_cast<ssize_t>(sizeof p)) continue;
    if (ntohs(p.op) != ARPOP_REPLY || std::memcmp(p.tpa, &from.s_addr, 4) != 0) continue;
    uint32_t sender = 0;
    std::memcpy(&sender, p.spa, 4);
    if (auto it = wanted.find(sender); it != wanted.end() && answered[it->second].empty()) {
      answered[it->second] = mac_text(p.sha);
      --left;
    }
  }
  return answered;
}

}  // namespace railyard::validate
