#include "rdma/bench/job.h"

#include "rdma/memory/cuda_memory.h"
#include "rdma/run/rails.h"
#include "rdma/transport/tcp_link.h"
#include "rdma/transport/verbs_link.h"

namespace railyard::rdma::bench {

Job start_job(const Options& o) {
  Job job{resolve_launch({o.rank, o.world, o.rendezvous, ""}, env),
          rail_entries(o.rails, std::getenv("NCCL_IB_HCA")),
          {},
          {},
          topology::Sysfs(topology::sysfs_root_from("")),
          nullptr,
          {},
          std::chrono::seconds(o.timeout_s)};
  if (o.transport == "nccl" && o.memory != "cuda")
    throw std::invalid_argument("--transport nccl runs on GPU memory: add --memory cuda");
  if (o.transport == "nccl" && o.op == "p2p")
    throw std::invalid_argument("p2p runs over --transport tcp or verbs, not nccl");
  if (o.op == "p2p" && job.launch.world != 2)
    throw std::invalid_argument("p2p runs between exactly 2 ranks, not " +
                                std::to_string(job.launch.world));
  for (const auto& e : job.entries) job.addresses.push_back(resolve_rail(e, job.sysfs.root()));
  if (o.transport == "verbs") {
    if (const size_t slot = parse_size(o.verbs_slot_size); slot == 0 || slot > (1u << 30))
      throw std::invalid_argument("--slot-size " + o.verbs_slot_size + ": 1 byte to 1G");
    int gid_index = o.gid_index;
    if (gid_index < 0)
      if (auto v = env("NCCL_IB_GID_INDEX")) gid_index = std::stoi(*v);
    for (size_t k = 0; k < job.entries.size(); ++k)
      job.plans.push_back(plan_rail(job.sysfs, job.entries[k], job.addresses[k], gid_index));
  }
  std::vector<Socket> listeners;
  std::vector<Endpoint> mine;
  for (const auto& a : job.addresses) {
    listeners.push_back(Socket::listen_on(a, 0));
    mine.push_back({a, listeners.back().local_port()});
  }
  const Launch& l = job.launch;
  const ChannelKey key = ChannelKey::resolve(o.token_file);
  if (l.world > 1) warn_if_unauthenticated(key, "railyard-bench");
  const Endpoint rv = l.world > 1 ? Endpoint::parse(l.rendezvous) : Endpoint{"127.0.0.1", 1};
  const auto table = exchange_endpoints(l.rank, l.world, rv, mine, job.timeout, key);
  job.memory = o.memory == "cuda" ? cuda_memory(pick_gpu(o)) : host_memory(o.hugepages);
  job.ring = connect_ring(l.rank, l.world, job.addresses, listeners, table, job.timeout, key,
                          o.transport == "tcp" ? o.streams : 1);
  return job;
}

std::vector<std::unique_ptr<RingLink>> make_links(const Options& o, Job& job) {
  RingSockets& ring = job.ring;
  Memory& memory = *job.memory;
  std::vector<std::unique_ptr<RingLink>> links;
  if (o.transport == "tcp") {
    for (size_t k = 0; k < ring.next.size(); ++k)
      links.push_back(std::make_unique<TcpLink>(std::move(ring.next[k]), std::move(ring.prev[k]),
                                                memory, ring.next_names[k], ring.prev_names[k],
                                                job.addresses[k], job.timeout));
    return links;
  }
  const RegPath reg = choose_registration(
      {memory.on_device(), memory.dmabuf_supported(), peermem_loaded(job.sysfs.root())},
      o.gpudirect);
  for (size_t k = 0; k < ring.next.size(); ++k) {
    VerbsOptions vo;
    vo.plan = job.plans[k];
    vo.registration = reg;
    vo.slots = o.verbs_slots;
    vo.slot_bytes = parse_size(o.verbs_slot_size);
    if (auto tc = env("NCCL_IB_TC")) vo.traffic_class = std::stoi(*tc);
    links.push_back(make_verbs_link(std::move(ring.next[k][0]), std::move(ring.prev[k][0]),
                                    ring.next_names[k], ring.prev_names[k], memory, vo,
                                    job.timeout));
  }
  return links;
}

}  // namespace railyard::rdma::bench
