// The ring over TCP: per rail, one or more connections to the next rank and as many from the
// previous, each bound to the rail's address so that source-based routing keeps it on the rail.
// A message is cut into one contiguous part per connection (whole elements), since one TCP stream
// rarely fills a fast NIC. Non-blocking sockets and one poll loop overlap the sends, the receives
// and the reduction of what has arrived. CUDA memory is staged through pinned host memory, piece
// by piece, per connection. A rank that gives up says why on the way back of each connection
// from its previous rank (give_up_note.h), so that rank names the cause, not the messenger.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "rdma/memory/memory.h"
#include "rdma/ring/link.h"
#include "rdma/transport/socket.h"

namespace railyard::rdma {

class TcpLink final : public RingLink {
 public:
  // next[j] / prev[j]: connection j to the next rank and from the previous one (same count).
  TcpLink(std::vector<Socket> next, std::vector<Socket> prev, Memory& memory, std::string next_name,
          std::string prev_name, std::string address, std::chrono::milliseconds timeout);
  ~TcpLink() override;
  TcpLink(const TcpLink&) = delete;
  TcpLink& operator=(const TcpLink&) = delete;

  void exchange(const char* out, size_t out_bytes, char* landing, size_t in_bytes, size_t granule,
                const Sink& sink) override;
  std::string describe() const override;
  // Over each connection from the previous rank, whose way back carries nothing else.
  void tell_neighbours(const std::string& why) noexcept override;

 private:
  struct Stream {
    Socket next, prev;
    char* stage_out = nullptr;  // staging for CUDA memory, and receiving without a landing area
    char* stage_in = nullptr;
    // The way back from the next rank carries only a give-up note (tell_neighbours): what has
    // come of it, and whether the next rank has closed its end (done, or gone).
    std::string note;
    bool next_closed = false;
    std::string next_lost;  // the error that way back ended with (its reset, say), if any
  };
  // Reads what the next rank sent back on a connection: throws its give-up note once whole.
  void take_note(Stream& s) const;
  static std::string next_error(const Stream& s);
  std::vector<Stream> streams_;
  Memory& memory_;
  std::string next_name_, prev_name_, address_;
  std::chrono::milliseconds timeout_;
};

}  // namespace railyard::rdma
