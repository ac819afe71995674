// Host memory and the TCP link's two receive paths: in place, and staged piece by piece as it
// runs for CUDA memory (here through a Memory that says it is a device but is host memory, so
// the staging code runs without a GPU).
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>

#include "rdma/memory/memory.h"
#include "rdma/transport/tcp_link.h"

using namespace railyard::rdma;

namespace {

// Host memory that claims to be a device: TcpLink then stages its sends and receives.
class PretendDevice final : public Memory {
 public:
  std::string describe() const override { return "pretend device"; }
  bool on_device() const override { return true; }
  void* alloc(size_t b) override { return host_->alloc(b); }
  void release(void* p, size_t b) override { host_->release(p, b); }
  void* alloc_staging(size_t b) override {
    ++staging_;
    return host_->alloc_staging(b);
  }
  void release_staging(void* p, size_t b) override { host_->release_staging(p, b); }
  void reduce(void* d, const void* a, const void* b, size_t n, DType t) override {
    host_->reduce(d, a, b, n, t);
  }
  void copy(void* d, const void* s, size_t b) override {
    ++copies_;
    host_->copy(d, s, b);
  }
  int copies_ = 0, staging_ = 0;

 private:
  std::unique_ptr<Memory> host_ = host_memory(false);
};

// Two links on loopback, each one's next the other's prev (a ring of two), `streams`
// connections each way.
struct Pair {
  std::unique_ptr<TcpLink> a, b;
  Pair(Memory& ma, Memory& mb, int streams = 1) {
    const auto t = std::chrono::seconds(5);
    Socket la = Socket::listen_on("127.0.0.1", 0), lb = Socket::listen_on("127.0.0.1", 0);
    std::vector<Socket> a_next, a_prev, b_next, b_prev;
    for (int j = 0; j < streams; ++j) {
      a_next.push_back(Socket::connect_to({"127.0.0.1", lb.local_port()}, "127.0.0.1", t));
      b_prev.push_back(lb.accept_one(t, "a"));
      b_next.push_back(Socket::connect_to({"127.0.0.1", la.local_port()}, "127.0.0.1", t));
      a_prev.push_back(la.accept_one(t, "b"));
    }
    a = std::make_unique<TcpLink>(std::move(a_next), std::move(a_prev), ma, "b", "b", "127.0.0.1",
                                  t);
    b = std::make_unique<TcpLink>(std::move(b_next), std::move(b_prev), mb, "a", "a", "127.0.0.1",
                                  t);
  }
};

// Sends `bytes` each way at once; returns what each side's sink assembled.
std::pair<std::vector<char>, std::vector<char>> swap(Pair& p, const std::vector<char>& from_a,
                                                     const std::vector<char>& from_b,
                                                     size_t granule, bool land) {
  std::vector<char> at_a(from_b.size(), 0), at_b(from_a.size(), 0);
  std::vector<char> land_a(from_b.size()), land_b(from_a.size());
  // Every byte must come exactly once, in whole elements but for the message's end.
  std::vector<char> seen_a(from_b.size(), 0), seen_b(from_a.size(), 0);
  auto sink_into = [granule](std::vector<char>& v, std::vector<char>& seen, size_t total) {
    return [&v, &seen, granule, total](size_t off, const char* d, size_t n) {
      REQUIRE((off % granule == 0 && (n % granule == 0 || off + n == total)));
      size_t twice = 0;
      for (size_t i = off; i < off + n; ++i) twice += seen[i]++ != 0;
      REQUIRE(twice == 0);
      std::memcpy(v.data() + off, d, n);
    };
  };
  std::thread tb([&] {
    p.b->exchange(from_b.data(), from_b.size(), land ? land_b.data() : nullptr, from_a.size(),
                  granule, sink_into(at_b, seen_b, from_a.size()));
  });
  p.a->exchange(from_a.data(), from_a.size(), land ? land_a.data() : nullptr, from_b.size(),
                granule, sink_into(at_a, seen_a, from_b.size()));
  tb.join();
  return {at_a, at_b};
}

std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>(i * 131 + static_cast<size_t>(seed));
  return v;
}

}  // namespace

TEST_CASE("host memory sums and copies", "[rdma][memory]") {
  auto m = host_memory(true);
  CHECK(m->describe() == "host (hugepages)");
  CHECK_FALSE(m->on_device());
  Buffer a(*m, 4u << 20), b(*m, 4u << 20);
  REQUIRE(reinterpret_cast<uintptr_t>(a.data()) % 4096 == 0);  // page-aligned
  auto* fa = reinterpret_cast<float*>(a.data());
  auto* fb = reinterpret_cast<float*>(b.data());
  for (int i = 0; i < 1000; ++i) fa[i] = static_cast<float>(i), fb[i] = 0.5f;
  m->reduce(fa, fa, fb, 1000, DType::kFloat32);  // in place
  CHECK(fa[999] == 999.5f);
  m->copy(fb, fa, 1000 * sizeof(float));
  CHECK(fb[10] == 10.5f);
  Buffer c(*m, 4096);
  auto* fc = reinterpret_cast<float*>(c.data());
  m->reduce(fc, fa, fb, 1000, DType::kFloat32);  // out of place: a and b stay
  CHECK(fc[10] == 21.0f);
  CHECK(fa[10] == 10.5f);
}

TEST_CASE("a TCP link delivers both directions whole, in place and staged, over 1 or 3 streams",
          "[rdma][memory]") {
  for (int streams : {1, 3})
    for (bool device : {false, true}) {
      PretendDevice dev_a, dev_b;
      auto host_a = host_memory(false), host_b = host_memory(false);
      Memory& ma = device ? static_cast<Memory&>(dev_a) : *host_a;
      Memory& mb = device ? static_cast<Memory&>(dev_b) : *host_b;
      Pair p(ma, mb, streams);
      // Odd sizes, larger than the 1 MiB stage, different each way; granules of 2 and 4.
      for (size_t granule : {2u, 4u}) {
        for (size_t n : {0u, 1u, 6u, (3u << 20) + 6, 12345u}) {
          INFO("streams " << streams << " device " << device << " granule " << granule << " bytes "
                          << n);
          const auto from_a = pattern(n, 1), from_b = pattern(n + 2 * granule, 2);
          for (bool land : {false, true}) {
            const auto [at_a, at_b] = swap(p, from_a, from_b, granule, land);
            CHECK(at_a == from_b);
            CHECK(at_b == from_a);
          }
        }
      }
      if (device) {
        CHECK(dev_a.staging_ == 2 * streams);  // one stage each way per stream, made once
        CHECK(dev_a.copies_ > 0);              // sends went through the stage
      }
    }
}
