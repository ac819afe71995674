#include "nccl-tests-wrapper/run/validate.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "common/process.h"
#include "nccl-tests-wrapper/checks/check.h"
#include "nccl-tests-wrapper/checks/counters.h"
#include "topology/discover/discover.h"

namespace railyard::validate {
namespace topo = railyard::topology;

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kCouldNotRun:
      return "could-not-run";
  }
  return "?";
}

namespace {

// The checks at rest, rail by rail in the table's order, the node's own last: as a person reads
// a node.
void at_rest(const std::vector<const NodeCheck*>& checks, const NodeView& view, Report& report) {
  std::vector<Finding> found;
  for (const NodeCheck* c : checks) c->at_rest(view, found);
  std::stable_sort(found.begin(), found.end(), [](const Finding& a, const Finding& b) {
    const auto key = [](const Finding& f) { return f.rail < 0 ? INT32_MAX : f.rail; };
    return key(a) < key(b);
  });
  for (auto& f : found) report.checks.push_back(std::move(f));
}

// A benchmark that fails before its table usually says why on its last line ("rank 1 never
// joined", "net6: no carrier"); without it the report could only say "exited with 2".
std::string last_line(const std::string& out) {
  size_t end = out.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t nl = out.rfind('\n', end);
  const size_t begin = nl == std::string::npos ? 0 : nl + 1;
  constexpr size_t kMax = 300;
  return out.substr(begin, std::min(end + 1 - begin, kMax));
}

// Runs the benchmark with the rail's environment; stdout and stderr are read together, as
// nccl-tests prints its failures on either.
void run_once(const Config& cfg, RunOutcome& run) {
  std::vector<std::string> argv = {"timeout", std::to_string(cfg.benchmark.timeout_seconds),
                                   cfg.benchmark.command};
  argv.insert(argv.end(), cfg.benchmark.args.begin(), cfg.benchmark.args.end());
  std::map<std::string, std::string> env = cfg.benchmark.env;
  env["NCCL_IB_HCA"] = run.nccl_ib_hca;
  env["CUDA_VISIBLE_DEVICES"] = run.cuda_visible_devices;
  if (cfg.checks.nccl_path) {  // nccl-path reads what NCCL says it chose
    env["NCCL_DEBUG"] = "INFO";
    env["NCCL_DEBUG_SUBSYS"] = "INIT,NET";
  }
  const ProcessResult p = run_process(argv, env, "", Stderr::kMerge);
  run.exit_code = p.exit_code;
  run.could_not_run = run.exit_code == 127 || run.exit_code == 126;
  run.parsed = parse_nccl_tests(p.out);
  run.nccl = parse_nccl_log(p.out);
  run.last_words = last_line(p.out);
}

void judge(const Config& cfg, std::optional<double> line_rate_gbps,
           std::optional<double> floor_gbps, RunOutcome& run) {
  run.problems.clear();
  run.busbw.reset();
  const auto& p = run.parsed;
  if (run.could_not_run) {
    run.problems.push_back("could not start " + cfg.benchmark.command);
    return;
  }
  run.measured_by_rank0 =
      cfg.rank > 0 && run.exit_code == 0 && p.rows.empty() && !p.complete && p.errors.size() <= 1;
  if (run.measured_by_rank0) return;
  if (run.exit_code == 124)
    run.problems.push_back("timed out after " + std::to_string(cfg.benchmark.timeout_seconds) +
                           " s");
  else if (run.exit_code != 0)
    run.problems.push_back("exited with " + std::to_string(run.exit_code));
  if (!p.complete)
    run.problems.push_back("did not finish" + (p.errors.empty() ? "" : ": " + p.errors.front()));
  // Only where the parser found nothing of its own to quote.
  if (run.exit_code != 0 && p.rows.empty() && p.errors.size() <= 1 && !run.last_words.empty())
    run.problems.push_back("it said: " + run.last_words);
  if (p.out_of_bounds && *p.out_of_bounds > 0)
    run.problems.push_back(std::to_string(*p.out_of_bounds) + " out-of-bounds values");
  for (const auto& row : p.rows)
    for (const auto* pl : {&row.out_of_place, &row.in_place})
      if (*pl && (*pl)->wrong && *(*pl)->wrong > 0 && p.format != "legacy") {
        run.problems.push_back("#wrong " + std::to_string(static_cast<long long>(*(*pl)->wrong)) +
                               " at " + std::to_string(row.size) + " bytes");
        break;
      }
  for (const auto& row : p.rows) {
    if (row.size < cfg.benchmark.large_message_bytes) continue;
    for (const auto* pl : {&row.out_of_place, &row.in_place})
      if (*pl && (*pl)->busbw) run.busbw = std::min(run.busbw.value_or(1e300), *(*pl)->busbw);
  }
  if (!run.busbw) {
    if (p.complete)
      run.problems.push_back("no rows of at least " +
                             std::to_string(cfg.benchmark.large_message_bytes) + " bytes");
    return;
  }
  if (floor_gbps && *run.busbw < *floor_gbps)
    run.problems.push_back("busbw " + short_number(*run.busbw) + " GB/s below " +
                           short_number(*floor_gbps) + " GB/s");
  if (line_rate_gbps && cfg.benchmark.min_fraction_of_line_rate) {
    const double need = *line_rate_gbps / 8.0 * *cfg.benchmark.min_fraction_of_line_rate;
    if (*run.busbw < need)
      run.problems.push_back("busbw " + short_number(*run.busbw) + " GB/s below " +
                             short_number(*cfg.benchmark.min_fraction_of_line_rate * 100) +
                             "% of the port's " + short_number(*line_rate_gbps) + " Gb/s (" +
                             short_number(need) + " GB/s)");
  }
}

// Runs, and repeats while it fails, keeping the best attempt: one bad run is not a bad rail.
void run_judged(const Config& cfg, std::optional<double> line_rate, std::optional<double> floor,
                RunOutcome& run) {
  RunOutcome best;
  for (int i = 0; i < cfg.benchmark.repeats; ++i) {
    RunOutcome attempt = run;
    run_once(cfg, attempt);
    judge(cfg, line_rate, floor, attempt);
    const bool better = i == 0 || attempt.problems.size() < best.problems.size() ||
                        (attempt.problems.size() == best.problems.size() &&
                         attempt.busbw.value_or(0) > best.busbw.value_or(0));
    if (better) best = attempt;
    best.attempts = i + 1;
    if (attempt.problems.empty() || attempt.could_not_run) break;
  }
  run = best;
}

// The run across every rail against what the rails showed alone: with one rank per node driving
// every rail (scale "rails") it should move about the rail count times the median rail; with one
// GPU per rail (scale "one", nccl-tests' per-GPU busbw) about one median rail. A run across 8
// rails that moves less than one rail is never a pass.
void judge_against_rails(const Config& cfg, double median_rail, size_t rails, RunOutcome& run) {
  if (!run.busbw || median_rail <= 0) return;
  const bool scaled = cfg.benchmark.all_rails_scale == "rails";
  const double basis = scaled ? median_rail * static_cast<double>(rails) : median_rail;
  const double need = basis * cfg.benchmark.all_rails_min_fraction;
  if (*run.busbw >= need) return;
  const std::string of = scaled ? std::to_string(rails) + " x the median rail's " +
                                      short_number(median_rail) + " GB/s (" + short_number(basis) +
                                      " GB/s)"
                                : "the median rail's " + short_number(median_rail) + " GB/s";
  run.problems.push_back(
      "busbw " + short_number(*run.busbw) + " GB/s across " + std::to_string(rails) + " rails is " +
      short_number(*run.busbw / basis * 100) + "% of " + of + ", expected at least " +
      short_number(cfg.benchmark.all_rails_min_fraction * 100) + "%");
}

struct Counters {
  std::chrono::steady_clock::time_point at;
  std::vector<RailCounters> rails;
};

Counters read_counters(const topo::Node& node, const topo::Sysfs& sysfs) {
  Counters c{std::chrono::steady_clock::now(), {}};
  for (int r : node.rails) {
    const topo::Nic& nic = node.nics[static_cast<size_t>(r)];
    c.rails.push_back(read_rail_counters(
        sysfs, nic.pf.rdma_name(), nic.port() ? nic.port()->number : 1, nic.pf.netdev_name()));
  }
  return c;
}

// Every counter's growth over the benchmarks in the report, so that a degraded rail is named by
// its counters too.
void report_counters(const NodeView& view, const RunsSeen& seen, Report& report) {
  for (size_t k = 0; k < view.rails(); ++k) {
    const topo::Nic& nic = view.rail_nic(k);
    report.counters.push_back({view.rail_name(k), nic.pf.rdma_name(), nic.pf.netdev_name(),
                               seen.seconds, counter_delta(seen.before[k], seen.after[k])});
  }
}

}  // namespace

Report validate_node(const Config& cfg) {
  Report report;
  const topo::Sysfs sysfs(topo::sysfs_root_from(cfg.sysfs_root));
  topo::Node node;
  try {
    node = topo::discover(sysfs, topo::load_node_rails(cfg.rails_file));
  } catch (const std::exception& e) {
    report.verdict = Verdict::kCouldNotRun;
    report.reason = e.what();
    return report;
  }
  if (node.diagnostics.has_errors()) {
    report.verdict = Verdict::kCouldNotRun;
    report.reason =
        "sysfs could not be read completely: " + node.diagnostics.all().front().to_string();
    return report;
  }
  if (node.rails.empty()) {
    report.verdict = Verdict::kCouldNotRun;
    report.reason = "no rails on this node";
    return report;
  }
  const NodeView view{node, sysfs, cfg.checks};
  const std::vector<const NodeCheck*> checks = enabled_checks(cfg.checks);
  at_rest(checks, view, report);
  const Counters before = read_counters(node, sysfs);

  if (!cfg.benchmark.command.empty()) {
    std::optional<double> median_rail;  // of the per-rail runs
    if (cfg.benchmark.per_rail) {
      for (size_t k = 0; k < node.rails.size(); ++k) {
        const topo::Nic& nic = node.nics[static_cast<size_t>(node.rails[k])];
        RunOutcome run;
        run.name = view.rail_name(k);
        run.rail = static_cast<int>(k);
        run.nccl_ib_hca =
            "=" + nic.pf.rdma_name() + ":" + std::to_string(nic.port() ? nic.port()->number : 1);
        run.rdma_devices = {nic.pf.rdma_name()};
        for (const auto& b : node.bundles)
          if (b.rail == static_cast<int>(k) && run.cuda_visible_devices.empty())
            run.cuda_visible_devices = std::to_string(b.gpu);
        std::optional<double> rate;
        if (const topo::RdmaPort* port = nic.port()) rate = port->rate_gbps;
        run_judged(cfg, rate, cfg.benchmark.min_busbw_gbps, run);
        report.runs.push_back(std::move(run));
      }
      // Each rail against the median rail: the slowest link dictates the job.
      std::vector<double> bws;
      for (const auto& r : report.runs)
        if (r.busbw) bws.push_back(*r.busbw);
      if (!bws.empty()) {
        std::sort(bws.begin(), bws.end());
        median_rail = bws.size() % 2 ? bws[bws.size() / 2]
                                     : (bws[bws.size() / 2 - 1] + bws[bws.size() / 2]) / 2;
      }
      if (bws.size() >= 2) {
        const double median = *median_rail;
        for (auto& r : report.runs)
          if (r.busbw && *r.busbw < median * cfg.benchmark.min_fraction_of_median_rail)
            r.problems.push_back("busbw " + short_number(*r.busbw) + " GB/s is " +
                                 short_number(*r.busbw / median * 100) + "% of the median rail's " +
                                 short_number(median) + " GB/s");
      }
    }
    if (cfg.benchmark.all_rails) {
      RunOutcome run;
      run.name = "all rails";
      for (size_t k = 0; k < node.rails.size(); ++k) {
        const topo::Nic& nic = node.nics[static_cast<size_t>(node.rails[k])];
        run.nccl_ib_hca += (k ? "," : "=") + nic.pf.rdma_name() + ":" +
                           std::to_string(nic.port() ? nic.port()->number : 1);
        run.rdma_devices.push_back(nic.pf.rdma_name());
      }
      for (const auto& g : node.gpus)
        run.cuda_visible_devices += (g.index ? "," : "") + std::to_string(g.index);
      std::optional<TimelineSampler> sampler;
      if (cfg.checks.timeline_hz > 0) {
        std::vector<TimelineSampler::Rail> rails;
        for (size_t k = 0; k < node.rails.size(); ++k) {
          const topo::Nic& nic = node.nics[static_cast<size_t>(node.rails[k])];
          rails.push_back({view.rail_name(k), rail_byte_counter(sysfs, nic.pf.rdma_name(),
                                                                nic.port() ? nic.port()->number : 1,
                                                                nic.pf.netdev_name())});
        }
        sampler.emplace(std::move(rails), std::chrono::milliseconds(
                                              static_cast<int>(1000.0 / cfg.checks.timeline_hz)));
      }
      run_judged(cfg, std::nullopt, cfg.benchmark.all_rails_min_busbw_gbps, run);
      if (sampler) report.timeline = sampler->stop();
      if (median_rail) judge_against_rails(cfg, *median_rail, node.rails.size(), run);
      report.runs.push_back(std::move(run));
    }
  }

  const Counters after = read_counters(node, sysfs);
  RunsSeen seen{
      {}, before.rails, after.rails, std::chrono::duration<double>(after.at - before.at).count()};
  for (const auto& run : report.runs)
    seen.runs.push_back({run.name, run.rail, run.could_not_run, run.nccl, run.rdma_devices});
  for (const NodeCheck* c : checks) c->after_runs(view, seen, report.checks);
  report_counters(view, seen, report);

  const bool cannot =
      !report.runs.empty() && std::all_of(report.runs.begin(), report.runs.end(),
                                          [](const RunOutcome& r) { return r.could_not_run; });
  if (cannot) {
    report.verdict = Verdict::kCouldNotRun;
    report.reason = "could not start " + cfg.benchmark.command;
    return report;
  }
  const bool failed = std::any_of(report.checks.begin(), report.checks.end(),
                                  [](const Finding& f) { return f.fails(); }) ||
                      std::any_of(report.runs.begin(), report.runs.end(),
                                  [](const RunOutcome& r) { return !r.problems.empty(); });
  report.verdict = failed ? Verdict::kFail : Verdict::kPass;
  return report;
}

}  // namespace railyard::validate
