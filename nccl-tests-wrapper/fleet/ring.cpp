#include "nccl-tests-wrapper/fleet/ring.h"

#include <cstring>

#include "rdma/bench/job.h"
#include "rdma/ring/ring.h"

namespace railyard::validate {

RingOutcome test_ring(const rdma::bench::Options& o, const FleetRails& rails,
                      const topology::Sysfs& sysfs, int index, std::vector<rdma::Socket> listeners,
                      const rdma::Table& table, const std::vector<std::string>& names) {
  const int members = static_cast<int>(table.size());
  const std::chrono::milliseconds timeout = std::chrono::seconds(o.timeout_s);
  try {
    // What may throw comes first: GCC 12 -O3 warns of a half-built Job otherwise.
    rdma::RingSockets sockets =
        rdma::connect_ring(index, members, rails.addresses, listeners, table, timeout, rails.key,
                           o.transport == "tcp" ? o.streams : 1, [&](int m, size_t k) {
                             const auto i = static_cast<size_t>(m);
                             return (i < names.size() ? names[i] : "member " + std::to_string(m)) +
                                    " on rail " + std::to_string(k);
                           });
    rdma::bench::Job job{rdma::Launch{index, members, "", "fleet"},
                         rails.entries,
                         rails.addresses,
                         rails.plans,
                         topology::Sysfs(sysfs.root()),
                         rdma::host_memory(o.hugepages),
                         std::move(sockets),
                         timeout};
    rdma::Ring ring(index, members, rdma::bench::make_links(o, job), *job.memory);
    const size_t count = rdma::bench::parse_size(o.max_bytes) / sizeof(float);
    rdma::Buffer send(*job.memory, count * sizeof(float)), recv(*job.memory, count * sizeof(float));
    std::memset(send.data(), 0, send.size());  // host memory; zeros keep the sums cheap
    ring.prepare(send.data(), send.size());
    ring.prepare(recv.data(), recv.size());
    std::vector<double> seconds(rails.addresses.size(), 0);
    for (int i = 0; i < o.warmup + o.iters; ++i) {
      const auto t = ring.allreduce(send.data(), recv.data(), count, rdma::DType::kFloat32);
      if (i >= o.warmup)
        for (size_t k = 0; k < t.size() && k < seconds.size(); ++k) seconds[k] += t[k];
    }
    RingOutcome out;
    if (index != 0) return out;
    // Each rail carries its slice; bus bandwidth as nccl-tests counts it.
    const double slice = static_cast<double>(send.size()) / static_cast<double>(seconds.size());
    const double factor = 2.0 * (members - 1) / members;
    for (const double s : seconds)
      out.busbw.push_back(s > 0 ? std::optional(slice * o.iters / s / 1e9 * factor) : std::nullopt);
    return out;
  } catch (const std::exception& e) {
    return {{}, e.what()};
  }
}

}  // namespace railyard::validate
