#include "nccl-tests-wrapper/checks/dcb.h"

#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>

namespace railyard::validate {
namespace {

template <class T>
bool copy_attr(const nlattr* a, T& out) {
  if (!a || nla_len(a) < static_cast<int>(sizeof(T))) return false;
  std::memcpy(&out, nla_data(a), sizeof(T));
  return true;
}

int on_reply(nl_msg* msg, void* arg) {
  *static_cast<DcbState*>(arg) = decode_dcb_reply(nlmsg_hdr(msg));
  return NL_OK;
}

}  // namespace

DcbState decode_dcb_reply(const nlmsghdr* reply) {
  DcbState s;
  nlattr* tb[DCB_ATTR_MAX + 1] = {};
  if (nlmsg_parse(const_cast<nlmsghdr*>(reply), sizeof(dcbmsg), tb, DCB_ATTR_MAX, nullptr) < 0) {
    s.why = "the kernel's DCB reply could not be parsed";
    return s;
  }
  s.answered = true;
  if (!tb[DCB_ATTR_IEEE]) return s;
  nlattr* ieee[DCB_ATTR_IEEE_MAX + 1] = {};
  if (nla_parse_nested(ieee, DCB_ATTR_IEEE_MAX, tb[DCB_ATTR_IEEE], nullptr) < 0) return s;
  if (ieee_pfc pfc{}; copy_attr(ieee[DCB_ATTR_IEEE_PFC], pfc)) s.pfc_enabled = pfc.pfc_en;
  if (ieee_ets ets{}; copy_attr(ieee[DCB_ATTR_IEEE_ETS], ets)) {
    std::array<uint8_t, 8> p{}, bw{}, tsa{};
    for (int i = 0; i < 8; ++i) {
      p[i] = ets.prio_tc[i];
      bw[i] = ets.tc_tx_bw[i];
      tsa[i] = ets.tc_tsa[i];
    }
    s.prio_tc = p;
    s.tc_tx_bw = bw;
    s.tc_tsa = tsa;
  }
  if (nlattr* table = ieee[DCB_ATTR_IEEE_APP_TABLE]) {
    nlattr* a;
    int rem;
    nla_for_each_nested(a, table, rem) {
      dcb_app app{};
      if (nla_type(a) == DCB_ATTR_IEEE_APP && copy_attr(a, app))
        s.apps.push_back({app.selector, app.priority, app.protocol});
    }
  }
  return s;
}

DcbState query_dcb(const std::string& netdev) {
  DcbState s;
  std::unique_ptr<nl_sock, void (*)(nl_sock*)> sk(nl_socket_alloc(), nl_socket_free);
  std::unique_ptr<nl_msg, void (*)(nl_msg*)> msg(nlmsg_alloc_simple(RTM_GETDCB, NLM_F_REQUEST),
                                                 nlmsg_free);
  if (!sk || !msg) {
    s.why = "out of memory";
    return s;
  }
  if (int err = nl_connect(sk.get(), NETLINK_ROUTE); err < 0) {
    s.why = std::string("rtnetlink: ") + nl_geterror(err);
    return s;
  }
  dcbmsg head{};
  head.dcb_family = AF_UNSPEC;
  head.cmd = DCB_CMD_IEEE_GET;
  if (nlmsg_append(msg.get(), &head, sizeof head, NLMSG_ALIGNTO) < 0 ||
      nla_put_string(msg.get(), DCB_ATTR_IFNAME, netdev.c_str()) < 0) {
    s.why = "cannot build the DCB request";
    return s;
  }
  nl_socket_disable_auto_ack(sk.get());  // the reply, or an error, is the whole answer
  nl_socket_modify_cb(sk.get(), NL_CB_VALID, NL_CB_CUSTOM, on_reply, &s);
  int err = nl_send_auto(sk.get(), msg.get());
  if (err >= 0) err = nl_recvmsgs_default(sk.get());
  if (err < 0) {
    s = DcbState{};
    s.why = err == -NLE_OPNOTSUPP ? "the driver implements no DCB operations (EOPNOTSUPP)"
            : err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV
                ? "no netdev " + netdev + " in this network namespace"
                : std::string("RTM_GETDCB: ") + nl_geterror(err);
  }
  return s;
}

}  // namespace railyard::validate
