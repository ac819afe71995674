// The ring over TCP: one connection to the next rank and one from the previous, each bound to
// the rail's address so that source-based routing keeps it on the rail. Non-blocking sockets and
// one poll loop overlap the send, the receive and the reduction of what has arrived. CUDA memory
// is staged through pinned host memory, piece by piece.
#pragma once

#include <chrono>
#include <string>

#include "rdma/link.h"
#include "rdma/memory.h"
#include "rdma/socket.h"

namespace railyard::rdma {

class TcpLink final : public RingLink {
 public:
  TcpLink(Socket next, Socket prev, Memory& memory, std::string next_name, std::string prev_name,
          std::string address, std::chrono::milliseconds timeout);
  ~TcpLink() override;
  TcpLink(const TcpLink&) = delete;
  TcpLink& operator=(const TcpLink&) = delete;

  void exchange(const char* out, size_t out_bytes, char* landing, size_t in_bytes, size_t granule,
                const Sink& sink) override;
  std::string describe() const override;

 private:
  Socket next_, prev_;
  Memory& memory_;
  std::string next_name_, prev_name_, address_;
  std::chrono::milliseconds timeout_;
  char* stage_out_ = nullptr;  // staging: receive when there is no landing area, and CUDA memory
  char* stage_in_ = nullptr;
};

}  // namespace railyard::rdma
