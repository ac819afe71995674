// Peer for bench/allreduce: Gloo's ring allreduce (float sum) over its TCP transport bound to one
// interface, rendezvous through a file store; rank 0 prints "size busbw_GBps" per size.
#include <gloo/allreduce_ring.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: gloo_allreduce RANK SIZE STORE_DIR IFACE MIN MAX ITERS\n");
    return 2;
  }
  const int rank = std::atoi(argv[1]), n = std::atoi(argv[2]);
  const long min = std::atol(argv[5]), max = std::atol(argv[6]);
  const int iters = std::atoi(argv[7]);
  gloo::transport::tcp::attr attr;
  attr.iface = argv[4];
  auto dev = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(argv[3]);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, n);
  ctx->connectFullMesh(store, dev);
  std::vector<float> buf(static_cast<size_t>(max / 4));
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i % 7);
  for (long bytes = min; bytes <= max; bytes *= 4) {
    gloo::AllreduceRing<float> ar(ctx, {buf.data()}, static_cast<int>(bytes / 4));
    ar.run();  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) ar.run();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
    if (rank == 0)
      std::printf("%ld %.4f\n", bytes, static_cast<double>(bytes) / s / 1e9 * 2.0 * (n - 1) / n);
  }
  return 0;
}
