#include "cni/plugin/rdma_netns.h"

#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <rdma/rdma_netlink.h>

#include <memory>
#include <optional>

#include "cni-protocol/error.h"

namespace railyard::cni {
namespace {

constexpr int kNetlinkRdma = 20;  // NETLINK_RDMA

struct Socket {
  nl_sock* sk = nl_socket_alloc();
  ~Socket() { nl_socket_free(sk); }
  bool connect() { return sk && nl_connect(sk, kNetlinkRdma) == 0; }
};

int nldev(int op) {
  return RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
}

// Sends `msg` and hands every answer's attributes to `on_attrs`.
template <class F>
int exchange(nl_sock* sk, nl_msg* msg, F on_attrs) {
  auto cb = [](nl_msg* m, void* arg) -> int {
    nlattr* tb[RDMA_NLDEV_ATTR_MAX] = {};
    if (nlmsg_parse(nlmsg_hdr(m), 0, tb, RDMA_NLDEV_ATTR_MAX - 1, nullptr) == 0)
      (*static_cast<F*>(arg))(tb);
    return NL_OK;
  };
  nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, cb, &on_attrs);
  int err = nl_send_auto(sk, msg);
  nlmsg_free(msg);
  if (err < 0) return err;
  return nl_recvmsgs_default(sk);
}

std::optional<uint32_t> device_index(nl_sock* sk, const std::string& name) {
  std::optional<uint32_t> index;
  nl_msg* msg = nlmsg_alloc_simple(nldev(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP);
  exchange(sk, msg, [&](nlattr** tb) {
    if (tb[RDMA_NLDEV_ATTR_DEV_NAME] && tb[RDMA_NLDEV_ATTR_DEV_INDEX] &&
        name == nla_get_string(tb[RDMA_NLDEV_ATTR_DEV_NAME]))
      index = nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
  });
  return index;
}

}  // namespace

const char* to_string(RdmaNetnsMode m) {
  switch (m) {
    case RdmaNetnsMode::kShared:
      return "shared";
    case RdmaNetnsMode::kExclusive:
      return "exclusive";
    case RdmaNetnsMode::kUnavailable:
      break;
  }
  return "unavailable";
}

RdmaNetnsMode rdma_netns_mode() {
  Socket s;
  if (!s.connect()) return RdmaNetnsMode::kUnavailable;
  std::optional<uint8_t> mode;
  nl_msg* msg = nlmsg_alloc_simple(nldev(RDMA_NLDEV_CMD_SYS_GET), NLM_F_REQUEST);
  if (exchange(s.sk, msg,
               [&](nlattr** tb) {
                 if (tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE])
                   mode = nla_get_u8(tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]);
               }) < 0 ||
      !mode)
    return RdmaNetnsMode::kUnavailable;
  return *mode ? RdmaNetnsMode::kShared : RdmaNetnsMode::kExclusive;
}

void move_rdma_device(const std::string& name, int netns_fd) {
  Socket s;
  if (!s.connect())
    throw CniError(kInvalidConfig, "cannot move RDMA device " + name + ": no RDMA netlink");
  const auto index = device_index(s.sk, name);
  if (!index)
    throw CniError(kInvalidConfig, "RDMA device " + name + " is not visible in this namespace");
  nl_msg* msg = nlmsg_alloc_simple(nldev(RDMA_NLDEV_CMD_SET), NLM_F_REQUEST | NLM_F_ACK);
  nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, *index);
  nla_put_u32(msg, RDMA_NLDEV_NET_NS_FD, static_cast<uint32_t>(netns_fd));
  if (int err = exchange(s.sk, msg, [](nlattr**) {}); err < 0)
    throw CniError(kInvalidConfig,
                   "cannot move RDMA device " + name + " to the pod: " + nl_geterror(err));
}

}  // namespace railyard::cni
