// A netdev's IEEE 802.1Qaz DCB state, asked of the kernel over rtnetlink (RTM_GETDCB,
// DCB_CMD_IEEE_GET) in the caller's network namespace: PFC, ETS and the APP table (DSCP entries
// there mean the port trusts DSCP). What mlx5's sysfs adds for RoCE (ECN per priority) is read
// by roce_qos.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct nlmsghdr;

namespace railyard::validate {

struct DcbApp {
  uint8_t selector = 0;  // 1 ethertype, 2 TCP/SCTP port, 3 UDP port, 4 any port, 5 DSCP
  uint8_t priority = 0;
  uint16_t protocol = 0;
};

struct DcbState {
  bool answered = false;
  std::string why;  // when not answered: "the driver implements no DCB operations (EOPNOTSUPP)"
  std::optional<uint8_t> pfc_enabled;  // bit P: PFC on priority P
  std::optional<std::array<uint8_t, 8>> prio_tc, tc_tx_bw, tc_tsa;
  std::vector<DcbApp> apps;
};

DcbState query_dcb(const std::string& netdev);
// Reads one RTM_GETDCB reply; what query_dcb() does with the kernel's answer.
DcbState decode_dcb_reply(const nlmsghdr* reply);

}  // namespace railyard::validate
