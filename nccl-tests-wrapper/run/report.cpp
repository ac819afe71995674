#include "nccl-tests-wrapper/run/report.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "common/xml.h"
#include "kube/railyard_names.h"

namespace railyard::validate {
namespace {

using nlohmann::json;

std::string busbw_text(const RunOutcome& r) {
  if (r.measured_by_rank0) return "ran; measured by rank 0";
  if (!r.busbw) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, *r.busbw < 1 && *r.busbw > 0 ? "%.3f GB/s" : "%.1f GB/s",
                *r.busbw);
  return buf;
}

const char* marker(State s) {
  switch (s) {
    case State::kOk:
      return "ok  ";
    case State::kWarn:
      return "warn";
    case State::kUnknown:
      return "??  ";
    case State::kFail:
      break;
  }
  return "FAIL";
}

}  // namespace

void print_report(const Report& r, std::ostream& out) {
  out << "railyard-validate: " << to_string(r.verdict);
  if (!r.reason.empty()) out << " (" << r.reason << ")";
  out << "\n";
  if (!r.checks.empty()) {
    std::map<std::string, int> count;
    for (const auto& f : r.checks) ++count[to_string(f.state)];
    out << "\nNode checks (" << count["ok"] << " ok, " << count["fail"] << " failed, "
        << count["warn"] << " warnings, " << count["unknown"] << " unknown):\n";
    for (const auto& f : r.checks)
      out << "  " << marker(f.state) << "  " << f.subject << "  " << f.check << ": "
          << (f.unknown() ? "unknown: " : "") << f.detail << "\n";
  }
  if (!r.runs.empty()) {
    out << "\nBenchmark (large-message busbw, worst row):\n";
    for (const auto& run : r.runs) {
      out << "  " << (run.problems.empty() ? "ok  " : "FAIL") << "  " << run.name << "  "
          << busbw_text(run) << "  (" << run.attempts << (run.attempts == 1 ? " run" : " runs")
          << ", NCCL_IB_HCA=" << run.nccl_ib_hca << ")\n";
      for (const auto& p : run.problems) out << "          " << p << "\n";
    }
  }
}

json report_json(const Report& r) {
  json checks = json::array();
  for (const auto& f : r.checks)
    checks.push_back({{"rail", f.subject},  // DESIGN's name; "subject" kept for older readers
                      {"subject", f.subject},
                      {"check", f.check},
                      {"status", to_string(f.state)},
                      {"ok", f.ok()},
                      {"warning", f.warns()},
                      {"detail", f.detail},
                      {"evidence", f.evidence}});
  json counters = json::array();
  for (const auto& c : r.counters)
    counters.push_back({{"rail", c.rail},
                        {"rdma_device", c.device},
                        {"netdev", c.netdev},
                        {"seconds", c.seconds},
                        {"delta", c.delta}});
  json timeline = {{"t", r.timeline.t}, {"rails", json::array()}};
  for (const auto& rail : r.timeline.rails)
    timeline["rails"].push_back(
        {{"name", rail.name}, {"source", rail.source}, {"gbps", rail.gbps}});
  json runs = json::array();
  for (const auto& run : r.runs)
    runs.push_back(
        {{"name", run.name},
         {"nccl_ib_hca", run.nccl_ib_hca},
         {"cuda_visible_devices", run.cuda_visible_devices},
         {"attempts", run.attempts},
         {"exit_code", run.exit_code},
         {"busbw", run.busbw ? json(*run.busbw) : json(nullptr)},
         {"measured_by_rank0", run.measured_by_rank0},
         {"ok", run.problems.empty()},
         {"problems", run.problems},
         {"avg_busbw", run.parsed.avg_busbw ? json(*run.parsed.avg_busbw) : json(nullptr)}});
  return {{"verdict", to_string(r.verdict)},
          {"reason", r.reason},
          {"checks", checks},
          {"runs", runs},
          {"counters", counters},
          {"timeline", timeline}};
}

std::string junit_xml(const Report& r) {
  int tests = 0, failures = 0;
  std::ostringstream cases;
  int skipped = 0;
  auto tc = [&](const std::string& cls, const std::string& name,
                const std::vector<std::string>& problems, const std::string& skip = "") {
    ++tests;
    cases << "    <testcase classname=\"" << xml_escape(cls) << "\" name=\"" << xml_escape(name)
          << "\"";
    if (!skip.empty()) {
      ++skipped;
      cases << ">\n      <skipped message=\"" << xml_escape(skip) << "\"/>\n    </testcase>\n";
      return;
    }
    if (problems.empty()) {
      cases << "/>\n";
      return;
    }
    ++failures;
    std::string msg;
    for (const auto& p : problems) msg += (msg.empty() ? "" : "; ") + p;
    cases << ">\n      <failure message=\"" << xml_escape(msg) << "\"/>\n    </testcase>\n";
  };
  for (const auto& f : r.checks)
    tc("checks." + f.check, f.subject,
       f.fails() ? std::vector<std::string>{f.detail} : std::vector<std::string>{},
       f.unknown() ? "unknown: " + f.detail : "");
  for (const auto& run : r.runs) tc("benchmark", run.name, run.problems);
  if (r.verdict == Verdict::kCouldNotRun) tc("railyard-validate", "run", {r.reason});
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
         "name=\"railyard-validate\" tests=\""
      << tests << "\" failures=\"" << failures << "\" skipped=\"" << skipped << "\">\n"
      << cases.str() << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

json node_patch(const Report& r) {
  json summary = {{"verdict", to_string(r.verdict)}, {"failed", json::array()}};
  for (const auto& f : r.checks)
    if (f.fails()) summary["failed"].push_back(f.subject + " " + f.check + ": " + f.detail);
  for (const auto& run : r.runs)
    for (const auto& p : run.problems) summary["failed"].push_back(run.name + ": " + p);
  return {{"metadata",
           {{"labels", {{kube::kValidatedLabel, r.verdict == Verdict::kPass ? "true" : "false"}}},
            {"annotations", {{kube::kValidationAnnotation, summary.dump()}}}}}};
}

}  // namespace railyard::validate
