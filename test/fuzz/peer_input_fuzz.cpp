// libFuzzer target for what railyard reads from its peers and from its own files, which a fault
// or a stranger may have shaped: the fleet's control messages (the JSON parse with its nesting cap,
// then each message's checks), nccl-tests output and NCCL's logs, railyard-cni's state records
// and the DRA driver's claim records, the bench's rendezvous lines, the bytes a client sends
// the device plugin's metrics port, and the validation's findings file the device plugin reads. The
// first byte picks the reader; the rest is its input. A reader may reject input only with its own
// error type; anything else (a crash, another exception, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "cni/plugin/state.h"
#include "common/rail_findings.h"
#include "deviceplugin/metrics.h"
#include "dra/slices/prepare.h"
#include "nccl-tests-wrapper/fleet/messages.h"
#include "nccl-tests-wrapper/nccl/nccl_log.h"
#include "nccl-tests-wrapper/nccl/parse.h"
#include "rdma/run/rendezvous_lines.h"
#include "rdma/transport/frame.h"

using namespace railyard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 8) {
      case 0: {  // a control message, as rank 0 or a rank reads it
        const auto m = rdma::parse_control_json(input, "fuzz");
        // Every reader sees every message: a hello must not pass as an order, and so on.
        const std::function<void(size_t)> readers[] = {
            [&](size_t rails) { validate::parse_hello(m, 4, rails, "fuzz"); },
            [&](size_t rails) { validate::parse_pair(m, rails, "fuzz"); },
            [&](size_t rails) { validate::parse_ring(m, rails, "fuzz"); },
            [&](size_t rails) { validate::parse_probe(m, rails, "fuzz"); },
            [&](size_t rails) { validate::parse_ports(m, rails, "fuzz"); }};
        for (const size_t rails : {size_t{1}, size_t{2}, size_t{8}})
          for (const auto& read : readers) {
            try {
              read(rails);
            } catch (const rdma::NetError&) {
            }
          }
        break;
      }
      case 1:
        validate::to_json(validate::parse_nccl_tests(input)).dump();
        break;
      case 2:
        validate::parse_nccl_log(input);
        break;
      case 3: {
        auto j = nlohmann::json::parse(input, nullptr, false);
        if (!j.is_discarded()) cni::AttachmentState::from_json(j).to_json().dump();
        break;
      }
      case 4: {
        auto j = nlohmann::json::parse(input, nullptr, false);
        if (!j.is_discarded()) dra::PreparedClaim::from_json(j).to_json().dump();
        break;
      }
      case 5:  // a joining rank's line to rank 0, and rank 0's table to a rank
        for (const int world : {1, 2, 8})
          for (const size_t rails : {size_t{1}, size_t{4}}) {
            try {
              rdma::decode_join(input, world, rails, "fuzz");
            } catch (const rdma::NetError&) {
            }
            try {
              rdma::decode_table(input, world, rails, "fuzz");
            } catch (const rdma::NetError&) {
            }
          }
        break;
      case 6: {  // a client of the metrics port
        deviceplugin::Metrics m;
        m.count_allocation("railyard.io/rail0", 1);
        deviceplugin::answer_request_bytes(input, m, [] { return true; });
        break;
      }
      case 7:  // the validation's findings file, as the device plugin reads it
        try {
          parse_rail_findings(input);
        } catch (const std::runtime_error&) {  // its own refusal, naming the field
        }
        break;
    }
  } catch (const rdma::NetError&) {
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
