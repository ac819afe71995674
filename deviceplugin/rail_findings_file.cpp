#include "deviceplugin/rail_findings_file.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "common/log_escape.h"

namespace railyard::deviceplugin {

const RailFindings& RailFindingsFile::current() {
  // One stat per health pass (every 500 ms): the file is read only when it changed.
  struct ::stat st {};
  if (::stat(path_.c_str(), &st) != 0) {  // no file (yet, or removed): no finding stands
    if (seen_) spdlog::info("validation findings {} gone: no rail marked", path_.string());
    seen_.reset();
    findings_ = {};
    return findings_;
  }
  const Stamp stamp{st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size, st.st_ino};
  if (seen_ && *seen_ == stamp) return findings_;
  seen_ = stamp;
  const auto size = static_cast<uintmax_t>(st.st_size);
  try {
    if (size > kMaxRailFindingsBytes)
      throw std::runtime_error("larger than " + std::to_string(kMaxRailFindingsBytes) + " bytes");
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) throw std::runtime_error("cannot be read");
    findings_ = parse_rail_findings(ss.str());
    spdlog::info("validation findings {} ({} at {}): {} failed rail(s)", path_.string(),
                 escape_controls(findings_.verdict), escape_controls(findings_.validated_at),
                 findings_.failed.size());
  } catch (const std::exception& e) {
    spdlog::warn("validation findings {}: {}; keeping the last good ones", path_.string(),
                 escape_controls(e.what()));
  }
  return findings_;
}

void mark_failed_rails(const RailFindings& findings, const std::vector<Pool>& pools,
                       HealthByPool& health) {
  if (findings.failed.empty()) return;
  for (const auto& pool : pools) {
    auto& of_pool = health[pool.resource];
    for (const auto& d : pool.devices) {
      auto f = findings.failed.find(d.rail);
      if (f == findings.failed.end()) continue;
      DeviceHealth& h = of_pool[d.id];
      if (!h.healthy) continue;
      h.healthy = false;
      h.reason = "rail " + std::to_string(d.rail) + " failed validation" +
                 (findings.validated_at.empty() ? "" : " at " + findings.validated_at) + ": " +
                 f->second;
    }
  }
}

}  // namespace railyard::deviceplugin
