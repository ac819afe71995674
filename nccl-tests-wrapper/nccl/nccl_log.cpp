#include "nccl-tests-wrapper/nccl/nccl_log.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>

namespace railyard::validate {

namespace {

// A channel NCCL connected over the network, or nullopt for any other line (P2P, SHM, the ring
// order). NCCL 2.7 and later print "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA",
// "via NET/IB/1(0)/GDRDMA/Shared" (the PXN proxy rank in parentheses), "via NET/Socket/0"; 2.4-2.6
// print "Ring 00 : ..." with [send] or [receive] (2.3's Ring lines have neither, and its device
// indices cannot be resolved from its device list, so they are left unread).
std::optional<NcclChannel> network_channel(const std::string& line) {
  static const std::regex channel(
      R"(NCCL INFO Channel (\d+(?:/\d+)?) : .* via NET/([^/\s]+)/(\d+)(?:\(\d+\))?(/GDRDMA)?)");
  static const std::regex ring(
      R"(NCCL INFO Ring (\d+) : \S+ -> \S+ \[(?:send|receive)\] via NET/([^/\s]+)/(\d+)(/GDRDMA)?)");
  std::smatch m;
  if (!std::regex_search(line, m, channel) && !std::regex_search(line, m, ring))
    return std::nullopt;
  // A device index is small; anything that does not fit an int is not NCCL's line.
  int dev = 0;
  const std::string digits = m[3];
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), dev);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return NcclChannel{m[1], m[2], dev, m[4].matched, line};
}

}  // namespace

NcclNetUse parse_nccl_log(const std::string& output) {
  static const std::regex using_network(R"(NCCL INFO Using network (\S+))");
  static const std::regex ib_list(R"(NCCL INFO NET/IB ?: Using (.*))");
  static const std::regex ib_entry(R"(\[(\d+)\]([^\s/]+)/(IB|RoCE))");
  // Rank 0 prints it bare up to 2.6 and as an INFO line too; either names the generation.
  static const std::regex version(R"(NCCL version (\d+\.\d+\.\d+))");
  NcclNetUse use;
  std::istringstream in(output);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!use.version && std::regex_search(line, m, version)) use.version = m[1];
    if (line.find("NCCL INFO") == std::string::npos) continue;
    use.any_info = true;
    if (std::regex_search(line, m, using_network)) {
      use.network = m[1];
    } else if (std::regex_search(line, m, ib_list)) {
      use.ib_devices.clear();
      const std::string list = m[1];
      for (auto it = std::sregex_iterator(list.begin(), list.end(), ib_entry);
           it != std::sregex_iterator(); ++it) {
        // NCCL numbers its net devices from 0, a few dozen at most: an index past that is not
        // NCCL's (a log line garbled, or shaped to make us allocate), and is left out.
        constexpr size_t kMaxNetDevices = 1024;
        const std::string digits = (*it)[1];
        size_t i = kMaxNetDevices;
        std::from_chars(digits.data(), digits.data() + digits.size(), i);
        if (i >= kMaxNetDevices) continue;
        if (use.ib_devices.size() <= i) use.ib_devices.resize(i + 1);
        use.ib_devices[i] = (*it)[2];
      }
    } else if (auto c = network_channel(line)) {
      use.channels.push_back(std::move(*c));
    }
  }
  return use;
}

}  // namespace railyard::validate
