#include "nccl-tests-wrapper/apply/judgement.h"

#include <algorithm>
#include <map>

namespace railyard::validate {

namespace {

// A check's name as a taint value: the checks' names are label values already ("port-errors");
// "port" and "rate" say more as what they found.
std::string value_of_check(const std::string& check) {
  if (check == "port") return "port-down";
  if (check == "rate") return "slow-link";
  if (check == "pcie") return "pcie-degraded";
  return check;
}

void add_call(std::map<int, RailCall>& calls, int rail, const std::string& value,
              std::string evidence) {
  RailCall& c = calls[rail];
  c.rail = rail;
  if (c.value.empty()) c.value = value;
  c.evidence.push_back(std::move(evidence));
}

std::vector<RailCall> in_rail_order(std::map<int, RailCall>& calls) {
  std::vector<RailCall> out;
  for (auto& [rail, c] : calls) out.push_back(std::move(c));
  return out;
}

}  // namespace

NodeJudgement judge_node(const Report& report, const std::string& node) {
  NodeJudgement j{node, report.verdict, {}, {}, {}};
  if (report.verdict == Verdict::kCouldNotRun) {
    j.could_not_run = report.reason.empty() ? "the run could not run" : report.reason;
    return j;
  }
  std::map<int, RailCall> calls;
  for (const auto& f : report.checks) {
    if (!f.fails()) continue;
    std::string line = f.subject + " " + f.check + ": " + f.detail;
    if (f.rail >= 0)
      add_call(calls, f.rail, value_of_check(f.check), std::move(line));
    else
      j.node_failures.push_back(std::move(line));
  }
  for (const auto& run : report.runs)
    for (const auto& p : run.problems) {
      std::string line = run.name + ": " + p;
      if (run.rail >= 0)
        add_call(calls, run.rail, "slow", std::move(line));
      else
        j.node_failures.push_back(std::move(line));
    }
  j.rails = in_rail_order(calls);
  return j;
}

RailFindings rail_findings(const NodeJudgement& j, const std::string& now) {
  RailFindings f{j.node, now, to_string(j.verdict), {}};
  for (const auto& c : j.rails)
    f.failed[c.rail] = c.value + (c.evidence.empty() ? "" : ": " + c.evidence.front());
  return f;
}

std::vector<NodeJudgement> judge_fleet(const FleetReport& report) {
  if (!report.could_not_run.empty()) return {};
  // By node name, in the report's order: ranks that share a node (a test rig, two pods on one
  // machine) are one judgement, or a passing rank would undo its twin's rules.
  std::vector<NodeJudgement> out;
  std::vector<std::map<int, RailCall>> calls;
  std::map<std::string, size_t> index;
  std::vector<size_t> of_rank;
  for (const auto& name : report.nodes) {
    auto [it, fresh] = index.emplace(name, out.size());
    if (fresh) {
      out.push_back({name, Verdict::kPass, {}, {}, {}});
      calls.emplace_back();
    }
    of_rank.push_back(it->second);
  }
  auto known = [&](int n) { return n >= 0 && static_cast<size_t>(n) < of_rank.size(); };
  auto at = [&](int n) { return of_rank[static_cast<size_t>(n)]; };
  for (const auto& c : report.culprits) {
    const std::string line = c.kind + ": " + c.evidence;
    if (c.kind == "node" && known(c.node)) {
      out[at(c.node)].node_failures.push_back(line);
    } else if ((c.kind == "nic" || c.kind == "miswire") && known(c.node) && c.rail >= 0) {
      add_call(calls[at(c.node)], c.rail, c.kind, line);
    } else if (c.kind == "cable" && c.rail >= 0) {
      for (int end : {c.node, c.peer})
        if (known(end)) add_call(calls[at(end)], c.rail, "cable", line);
    }
    // A leaf is the fabric's: no node's devices are to blame (the report names it).
  }
  for (size_t n = 0; n < out.size(); ++n) {
    out[n].rails = in_rail_order(calls[n]);
    if (!out[n].rails.empty() || !out[n].node_failures.empty()) out[n].verdict = Verdict::kFail;
  }
  return out;
}

}  // namespace railyard::validate
