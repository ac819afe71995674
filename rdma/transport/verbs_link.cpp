#include "rdma/transport/verbs_link.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "rdma/ring/give_up_note.h"
#include "rdma/ring/schedule.h"

namespace railyard::rdma {
namespace {

using Clock = std::chrono::steady_clock;

// What each end of a queue pair tells the other over the rail's TCP connection. Both ends run
// the same binary, so the layout is the same; fields are ordered to leave no padding.
struct Wire {
  uint64_t slots_addr;  // the receiver's slots (zero from the sending side)
  uint32_t qpn, psn, mtu, rkey, slots, slot_bytes;
  uint16_t lid;
  uint8_t gid[16];
  uint8_t pad[6];
};
static_assert(sizeof(Wire) == 56);

int mtu_bytes(ibv_mtu m) {
  return 128 << static_cast<int>(m);  // IBV_MTU_256 is 1
}
ibv_mtu mtu_enum(int bytes) {
  switch (bytes) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    default:
      return IBV_MTU_4096;
  }
}

std::string sys_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// How long an idle link spins before it sleeps on the completion channel: longer than the gap
// between completions of a busy rail (a 1 MiB write every ~20 us at 400 Gb/s), far shorter
// than a wakeup is worth saving.
constexpr auto kSpin = std::chrono::microseconds(50);

// How long a rank still takes completions after a neighbour it needs closed its socket: what the
// neighbour sent before it finished landed already (its writes were acknowledged), so only this
// node's own lag is covered; a neighbour that died mid-run is named after this.
constexpr auto kGrace = std::chrono::seconds(2);

constexpr uint64_t kWrite = 1, kCredit = 2, kRecvData = 3, kRecvCredit = 4;

class VerbsLink final : public RingLink {
 public:
  VerbsLink(Socket next, Socket prev, std::string next_name, std::string prev_name, Memory& memory,
            const VerbsOptions& o, std::chrono::milliseconds timeout)
      : next_{std::move(next), std::move(next_name)},
        prev_{std::move(prev), std::move(prev_name)},
        memory_(memory),
        o_(o),
        timeout_(timeout) {
    try {
      open();
      connect();
    } catch (...) {
      close();
      throw;
    }
  }
  ~VerbsLink() override { close(); }

  void prepare(void* base, size_t bytes) override {
    if (bytes && !staged() && !find_mr(base, bytes)) register_region(base, bytes);
  }

  std::string describe() const override {
    std::string s = "verbs " + o_.plan.device + ":" + std::to_string(o_.plan.port) + " gid " +
                    std::to_string(o_.plan.gid.index) + " (" + o_.plan.gid.why + "), mtu " +
                    std::to_string(mtu_) + ", " + reg_path_name(o_.registration);
    if (o_.plan.mtu && o_.plan.mtu != mtu_)
      s += " [sysfs predicted mtu " + std::to_string(o_.plan.mtu) + "]";
    return s;
  }

  void exchange(const char* out, size_t out_bytes, char* /*landing*/, size_t in_bytes,
                size_t granule, const Sink& sink) override {
    transfer(out, out_bytes, 1, in_bytes, 1, granule, sink);
  }

  // Pieces of the next messages go out while the last ones are still on the wire.
  void stream(const char* out, size_t out_count, char* /*landing*/, size_t in_count, size_t bytes,
              const Sink& sink) override {
    transfer(out, bytes, out_count, bytes, in_count, 1, sink);
  }

  // Over the neighbours' TCP connections, idle since the handshake; a neighbour that is gone
  // is not written to. take_news reads the note at the other end.
  void tell_neighbours(const std::string& why) noexcept override {
    const std::string note = give_up_note(why);
    for (const Neighbour* nb : {&next_, &prev_})
      if (!nb->gone) send_give_up_note(nb->sock.fd(), note);
  }

 private:
  // A neighbour as its TCP connection shows it, after the handshake (take_news).
  struct Neighbour {
    Socket sock;
    std::string name;
    std::optional<Clock::time_point> gone;  // when it closed the socket: finished, or died
    std::string note;                       // a give-up note, as much as has arrived
  };

  // `out_count` messages of out_bytes (the same buffer each time) out, `in_count` of in_bytes in.
  void transfer(const char* out, size_t out_bytes, size_t out_count, size_t in_bytes,
                size_t in_count, size_t granule, const Sink& sink) {
    const auto outp = pieces(out_bytes, remote_slot_bytes_, granule);
    const auto inp = pieces(in_bytes, o_.slot_bytes, granule);
    const size_t out_total = outp.size() * out_count, in_total = inp.size() * in_count;
    const ibv_mr* out_mr = nullptr;
    // Only when something goes out: a receive-only stream has no buffer to register (null).
    if (out_total > 0 && !staged()) {
      out_mr = find_mr(out, out_bytes);
      if (!out_mr) out_mr = register_region(const_cast<char*>(out), out_bytes);
    }
    size_t posted = 0, taken = 0;
    const uint64_t writes_before = writes_done_;
    auto deadline = Clock::now() + timeout_;
    auto spin_until = Clock::now() + kSpin;
    while (writes_done_ - writes_before < out_total || taken < in_total) {
      bool progress = false;
      while (posted < out_total && credits_ > 0 && writes_posted_ - writes_done_ < slots()) {
        const Span& p = outp[posted % outp.size()];
        post_write(out + p.begin, p.len, out_mr);
        ++posted;
        progress = true;
      }
      while (taken < in_total && !arrived_.empty()) {
        const auto [slot, len] = arrived_.front();
        const Span& p = inp[taken % inp.size()];
        arrived_.pop_front();
        if (len != p.len)
          throw NetError(prev_.name + " wrote " + std::to_string(len) + " bytes where " +
                         std::to_string(p.len) +
                         " were expected: do all ranks run the same command?");
        sink(p.begin, slot_ptr(slot), len);
        return_credit();
        ++taken;
        progress = true;
      }
      if (poll_cq() || progress) {
        restart_clocks(deadline, spin_until);
        continue;
      }
      // Spin a little: on a busy rail the next completion is microseconds away. Then sleep
      // until the NIC or a neighbour's socket has news, leaving the CPU to whoever moves the
      // bytes (with soft-RoCE that is this node's kernel: spinning halved the receiver's rate).
      if (Clock::now() < spin_until) continue;
      const bool need_next = writes_done_ - writes_before < out_total;
      const bool need_prev = taken < in_total;
      auto until = deadline;
      for (auto [gone, need, name, other_gone, other] :
           {std::tuple{next_.gone, need_next, &next_.name, prev_.gone, &prev_.name},
            std::tuple{prev_.gone, need_prev, &prev_.name, next_.gone, &next_.name}}) {
        if (!gone || !need) continue;
        if (Clock::now() > *gone + kGrace)
          // In a ring of three or more, a neighbour that saw the real death first gives up and
          // closes too: the one that went first is the one to look at.
          throw NetError(*name + " closed the connection (did it die?)" +
                         (other_gone && *other_gone < *gone && *other != *name
                              ? "; " + *other + " had closed its connection before, first"
                              : ""));
        until = std::min(until, *gone + kGrace);
      }
      if (Clock::now() > deadline)
        throw NetError("timed out after " + std::to_string(timeout_.count() / 1000) +
                       " s waiting for " + (need_prev ? prev_.name : next_.name) + " over verbs");
      if (wait_for_news(until)) restart_clocks(deadline, spin_until);
    }
  }

  // News arrived: a fresh timeout, and spin again before sleeping (one clock read).
  void restart_clocks(Clock::time_point& deadline, Clock::time_point& spin_until) const {
    const auto now = Clock::now();
    deadline = now + timeout_;
    spin_until = now + kSpin;
  }

  // Arms the completion queue, then sleeps on its channel, the sockets of the neighbours still
  // there and interrupt(), until `until` at most. True when the NIC completed something.
  bool wait_for_news(Clock::time_point until) {
    if (ibv_req_notify_cq(cq_, 0)) throw NetError(sys_error("ibv_req_notify_cq"));
    if (poll_cq()) return true;  // landed between the last poll and arming: no event comes for it
    // A negative fd is skipped by poll(): a closed socket would read as news forever.
    pollfd fds[4] = {{channel_->fd, POLLIN, 0},
                     {next_.gone ? -1 : next_.sock.fd(), POLLIN, 0},
                     {prev_.gone ? -1 : prev_.sock.fd(), POLLIN, 0},
                     {interrupt_fd(), POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    const int ms = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 1, 1000));
    if (::poll(fds, 4, ms) < 0 && errno != EINTR) throw NetError(sys_error("poll"));
    if (fds[3].revents) throw NetError(kInterrupted);
    if (fds[1].revents) take_news(next_);
    if (fds[2].revents) take_news(prev_);
    if (!(fds[0].revents & POLLIN)) return false;
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(channel_, &cq, &ctx)) throw NetError(sys_error("ibv_get_cq_event"));
    ibv_ack_cq_events(cq, 1);
    return true;
  }

  // After the handshake only a give-up note comes over TCP (tell_neighbours): a neighbour that
  // sends one gave up on someone, and that error is this rank's too. Otherwise a readable socket
  // is a neighbour that closed it, done or dead. Done is normal at the end of a run, when this
  // rank may still be taking the completions of what that neighbour sent or acknowledged: the
  // caller allows kGrace for them.
  static void take_news(Neighbour& nb) {
    if (nb.gone) return;
    const GiveUpNews news = take_give_up_note(nb.sock.fd(), nb.note);
    if (news.kind == GiveUpNews::Kind::kNote) throw NetError(nb.name + " gave up: " + news.text);
    if (news.kind == GiveUpNews::Kind::kNotANote)
      throw NetError(nb.name +
                     " sent bytes after the verbs handshake: do all ranks run the same "
                     "railyard-bench?");
    if (news.kind == GiveUpNews::Kind::kClosed) nb.gone = Clock::now();
  }

  struct Mr {
    char* base;
    size_t len;
    ibv_mr* mr;
  };

  bool staged() const { return o_.registration == RegPath::kStaged; }
  size_t slots() const { return static_cast<size_t>(o_.slots); }
  char* slot_ptr(uint32_t slot) const { return recv_slots_ + size_t{slot} * o_.slot_bytes; }

  void open() {
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list)
      throw NetError(sys_error("RDMA device " + o_.plan.device +
                               ": no RDMA devices here (ibv_get_device_list)"));
    for (int i = 0; i < n && !ctx_; ++i)
      if (o_.plan.device == ibv_get_device_name(list[i])) ctx_ = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    if (!ctx_)
      throw NetError("RDMA device " + o_.plan.device +
                     " cannot be opened (is /dev/infiniband mounted in this container?)");
    ibv_port_attr pa{};
    if (ibv_query_port(ctx_, static_cast<uint8_t>(o_.plan.port), &pa))
      throw NetError(sys_error("ibv_query_port " + o_.plan.device));
    if (pa.state != IBV_PORT_ACTIVE)
      throw NetError(o_.plan.device + ":" + std::to_string(o_.plan.port) + " is not ACTIVE");
    lid_ = pa.lid;
    mtu_ = mtu_bytes(pa.active_mtu);
    if (ibv_query_gid(ctx_, static_cast<uint8_t>(o_.plan.port), o_.plan.gid.index, &gid_))
      throw NetError(sys_error("ibv_query_gid " + std::to_string(o_.plan.gid.index)));
    pd_ = ibv_alloc_pd(ctx_);
    if (!pd_) throw NetError(sys_error("ibv_alloc_pd"));
    const int depth = 4 * o_.slots + 16;
    channel_ = ibv_create_comp_channel(ctx_);
    if (!channel_) throw NetError(sys_error("ibv_create_comp_channel"));
    cq_ = ibv_create_cq(ctx_, depth, nullptr, channel_, 0);
    if (!cq_) throw NetError(sys_error("ibv_create_cq"));
    for (ibv_qp** qp : {&qp_next_, &qp_prev_}) {
      ibv_qp_init_attr a{};
      a.send_cq = a.recv_cq = cq_;
      a.qp_type = IBV_QPT_RC;
      a.cap.max_send_wr = a.cap.max_recv_wr = static_cast<uint32_t>(2 * o_.slots + 4);
      a.cap.max_send_sge = a.cap.max_recv_sge = 1;
      *qp = ibv_create_qp(pd_, &a);
      if (!*qp) throw NetError(sys_error("ibv_create_qp"));
      ibv_qp_attr m{};
      m.qp_state = IBV_QPS_INIT;
      m.port_num = static_cast<uint8_t>(o_.plan.port);
      m.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
      if (ibv_modify_qp(*qp, &m,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        throw NetError(sys_error("ibv_modify_qp INIT"));
    }
    const size_t slots_len = slots() * o_.slot_bytes;
    // GPUDirect: the slots are GPU memory, so the reduction reads them where they landed.
    recv_on_device_ = !staged() && memory_.on_device();
    recv_slots_ = static_cast<char*>(recv_on_device_ ? memory_.alloc(slots_len)
                                                     : memory_.alloc_staging(slots_len));
    recv_mr_ = register_region(recv_slots_, slots_len);
    if (staged()) {
      send_stage_ = static_cast<char*>(memory_.alloc_staging(slots_len));
      send_stage_mr_ = register_region(send_stage_, slots_len);
    }
    for (int i = 0; i < o_.slots; ++i) {
      post_recv(qp_prev_, kRecvData);
      post_recv(qp_next_, kRecvCredit);
    }
  }

  Wire describe_qp(const ibv_qp* qp, bool receiver) const {
    Wire w{};
    w.qpn = qp->qp_num;
    w.psn = psn_;
    w.mtu = static_cast<uint32_t>(mtu_);
    w.lid = lid_;
    std::memcpy(w.gid, gid_.raw, sizeof w.gid);
    if (receiver) {
      w.slots_addr = reinterpret_cast<uintptr_t>(recv_slots_);
      w.rkey = recv_mr_->rkey;
      w.slots = static_cast<uint32_t>(o_.slots);
      w.slot_bytes = static_cast<uint32_t>(o_.slot_bytes);
    }
    return w;
  }

  void connect() {
    psn_ = std::random_device{}() & 0xffffff;
    const Wire to_next = describe_qp(qp_next_, false), to_prev = describe_qp(qp_prev_, true);
    next_.sock.send_all(&to_next, sizeof to_next, next_.name);
    prev_.sock.send_all(&to_prev, sizeof to_prev, prev_.name);
    Wire from_next{}, from_prev{};
    next_.sock.recv_all(&from_next, sizeof from_next, next_.name, timeout_);
    prev_.sock.recv_all(&from_prev, sizeof from_prev, prev_.name, timeout_);
    if (const std::string why =
            peer_slots_problem(from_next.slots, from_next.slot_bytes,
                               static_cast<uint64_t>(o_.slots), o_.slot_bytes, next_.name);
        !why.empty())
      throw NetError(why);
    remote_addr_ = from_next.slots_addr;
    remote_rkey_ = from_next.rkey;
    remote_slots_ = from_next.slots;
    remote_slot_bytes_ = from_next.slot_bytes;
    credits_ = remote_slots_;
    to_rts(qp_next_, from_next);
    to_rts(qp_prev_, from_prev);
    mtu_ = path_mtu(mtu_, static_cast<int>(std::min(from_next.mtu, from_prev.mtu)));
    // Nobody writes before both ends of every queue pair are ready to receive.
    const char ready = 1;
    char got = 0;
    next_.sock.send_all(&ready, 1, next_.name);
    prev_.sock.send_all(&ready, 1, prev_.name);
    next_.sock.recv_all(&got, 1, next_.name, timeout_);
    prev_.sock.recv_all(&got, 1, prev_.name, timeout_);
  }

  void to_rts(ibv_qp* qp, const Wire& r) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtu_enum(path_mtu(mtu_, static_cast<int>(r.mtu)));
    a.dest_qp_num = r.qpn;
    a.rq_psn = r.psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = static_cast<uint8_t>(o_.plan.port);
    a.ah_attr.dlid = r.lid;
    if (o_.plan.roce || r.lid == 0) {  // RoCE always routes by GID
      a.ah_attr.is_global = 1;
      std::memcpy(a.ah_attr.grh.dgid.raw, r.gid, sizeof r.gid);
      a.ah_attr.grh.sgid_index = static_cast<uint8_t>(o_.plan.gid.index);
      a.ah_attr.grh.hop_limit = 64;
      a.ah_attr.grh.traffic_class = static_cast<uint8_t>(o_.traffic_class);
    }
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      throw NetError(sys_error("ibv_modify_qp RTR (GID " + o_.plan.gid.gid + ")"));
    ibv_qp_attr s{};
    s.qp_state = IBV_QPS_RTS;
    s.timeout = 14;  // 4.096 us * 2^14 = 67 ms per try, 7 tries: a dead peer shows within 0.5 s
    s.retry_cnt = 7;
    s.rnr_retry = 7;
    s.sq_psn = psn_;
    s.max_rd_atomic = 1;
    if (ibv_modify_qp(qp, &s,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
      throw NetError(sys_error("ibv_modify_qp RTS"));
  }

  ibv_mr* register_region(void* p, size_t len) {
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    ibv_mr* mr = nullptr;
    char* base = static_cast<char*>(p);
    if (o_.registration == RegPath::kDmaBuf && memory_.on_device() && p != send_stage_) {
      auto d = memory_.export_dmabuf(p);
      if (!d) throw NetError("could not export GPU memory as dma-buf");
      mr = ibv_reg_dmabuf_mr(pd_, 0, d->len, reinterpret_cast<uintptr_t>(d->base), d->fd, access);
      ::close(d->fd);
      base = static_cast<char*>(d->base);
      len = d->len;
    } else {
      mr = ibv_reg_mr(pd_, p, len, access);
    }
    if (!mr)
      throw NetError(sys_error(std::string("registering ") + std::to_string(len) + " bytes (" +
                               reg_path_name(o_.registration) + ")"));
    mrs_.push_back({base, len, mr});
    return mr;
  }

  const ibv_mr* find_mr(const void* p, size_t len) const {
    const char* c = static_cast<const char*>(p);
    for (const auto& m : mrs_)
      if (c >= m.base && c + len <= m.base + m.len) return m.mr;
    return nullptr;
  }

  void post_recv(ibv_qp* qp, uint64_t id) {
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = id;  // write-with-immediate and credits carry no payload: no scatter list
    if (ibv_post_recv(qp, &wr, &bad)) throw NetError(sys_error("ibv_post_recv"));
  }

  void post_write(const char* src, size_t len, const ibv_mr* mr) {
    const uint32_t slot = static_cast<uint32_t>(writes_posted_ % remote_slots_);
    if (staged()) {
      char* stage =
          send_stage_ + size_t{static_cast<uint32_t>(writes_posted_ % slots())} * o_.slot_bytes;
      memory_.copy(stage, src, len);
      src = stage;
      mr = send_stage_mr_;
    }
    ibv_sge sge{reinterpret_cast<uintptr_t>(src), static_cast<uint32_t>(len), mr->lkey};
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = kWrite;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(static_cast<uint32_t>(len));
    wr.wr.rdma.remote_addr = remote_addr_ + uint64_t{slot} * remote_slot_bytes_;
    wr.wr.rdma.rkey = remote_rkey_;
    if (ibv_post_send(qp_next_, &wr, &bad)) throw NetError(sys_error("ibv_post_send (write)"));
    ++writes_posted_;
    --credits_;
  }

  void return_credit() {
    post_recv(qp_prev_, kRecvData);
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = kCredit;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(1);
    if (ibv_post_send(qp_prev_, &wr, &bad)) throw NetError(sys_error("ibv_post_send (credit)"));
  }

  // Takes what the NIC finished; true when there was anything.
  bool poll_cq() {
    ibv_wc wc[16];
    const int n = ibv_poll_cq(cq_, 16, wc);
    if (n < 0) throw NetError("ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) {
      const ibv_wc& w = wc[i];
      if (w.status != IBV_WC_SUCCESS) {
        const bool to_next = w.qp_num == qp_next_->qp_num;
        // A neighbour that gave up on someone else tore its queue pairs down after saying so.
        take_news(to_next ? next_ : prev_);
        throw NetError(
            std::string("lost ") + (to_next ? next_.name : prev_.name) +
            " over verbs: " + ibv_wc_status_str(w.status) +
            (w.status == IBV_WC_RETRY_EXC_ERR ? " (did it die, or is the GID/route wrong?)" : ""));
      }
      switch (w.wr_id) {
        case kWrite:
          ++writes_done_;
          break;
        case kRecvData:
          arrived_.push_back({recv_seq_++ % static_cast<uint32_t>(o_.slots), ntohl(w.imm_data)});
          break;
        case kRecvCredit:
          credits_ += ntohl(w.imm_data);
          post_recv(qp_next_, kRecvCredit);
          break;
        default:  // a credit went out
          break;
      }
    }
    return n > 0;
  }

  void close() {
    for (ibv_qp* qp : {qp_next_, qp_prev_})
      if (qp) ibv_destroy_qp(qp);
    qp_next_ = qp_prev_ = nullptr;
    for (auto& m : mrs_) ibv_dereg_mr(m.mr);
    mrs_.clear();
    const size_t slots_len = slots() * o_.slot_bytes;
    if (recv_slots_) {
      if (recv_on_device_)
        memory_.release(recv_slots_, slots_len);
      else
        memory_.release_staging(recv_slots_, slots_len);
    }
    if (send_stage_) memory_.release_staging(send_stage_, slots_len);
    recv_slots_ = send_stage_ = nullptr;
    if (cq_) ibv_destroy_cq(cq_);  // every event was acknowledged as it was taken
    if (channel_) ibv_destroy_comp_channel(channel_);
    channel_ = nullptr;
    if (pd_) ibv_dealloc_pd(pd_);
    if (ctx_) ibv_close_device(ctx_);
    cq_ = nullptr;
    pd_ = nullptr;
    ctx_ = nullptr;
  }

  Neighbour next_, prev_;
  Memory& memory_;
  VerbsOptions o_;
  std::chrono::milliseconds timeout_;

  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp *qp_next_ = nullptr, *qp_prev_ = nullptr;
  ibv_gid gid_{};
  uint16_t lid_ = 0;
  int mtu_ = 0;
  uint32_t psn_ = 0;

  std::vector<Mr> mrs_;
  char* recv_slots_ = nullptr;
  bool recv_on_device_ = false;
  ibv_mr* recv_mr_ = nullptr;
  char* send_stage_ = nullptr;
  ibv_mr* send_stage_mr_ = nullptr;

  uint64_t remote_addr_ = 0;
  uint32_t remote_rkey_ = 0, remote_slots_ = 0, remote_slot_bytes_ = 0;
  uint32_t credits_ = 0, recv_seq_ = 0;
  uint64_t writes_posted_ = 0, writes_done_ = 0;
  // Pieces landed but not yet taken: the previous rank may run a step ahead of this one.
  std::deque<std::pair<uint32_t, uint32_t>> arrived_;
};

}  // namespace

std::unique_ptr<RingLink> make_verbs_link(Socket next, Socket prev, std::string next_name,
                                          std::string prev_name, Memory& memory,
                                          const VerbsOptions& options,
                                          std::chrono::milliseconds timeout) {
  return std::make_unique<VerbsLink>(std::move(next), std::move(prev), std::move(next_name),
                                     std::move(prev_name), memory, options, timeout);
}

}  // namespace railyard::rdma
