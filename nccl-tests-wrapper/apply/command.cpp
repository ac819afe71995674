#include "nccl-tests-wrapper/apply/command.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>

#include "common/atomic_file.h"
#include "common/log_escape.h"
#include "common/rail_findings.h"
#include "nccl-tests-wrapper/apply/cluster.h"

namespace railyard::validate {

void add_apply_options(CLI::App* cmd, ApplySettings& s) {
  cmd->add_flag("--apply", s.apply,
                "change the cluster: a DeviceTaintRule per failed rail's device (key "
                "railyard.io/validation), the Node's label railyard.io/validated, its reason and "
                "the bring-up taint railyard.io/unvalidated; a pass removes what railyard-validate "
                "made. Exit 2 when the API server refuses (nothing is left half-applied)");
  cmd->add_option("--taint-effect", s.effect, "--apply: the rules' effect")
      ->check(CLI::IsMember({"NoSchedule", "NoExecute"}));
  cmd->add_option("--api-server", s.api.server,
                  "--apply: the API server's URL (default: in-cluster, KUBERNETES_SERVICE_HOST)");
  cmd->add_option("--api-token-file", s.api.token_file,
                  "--apply: bearer token file (default: the service account's)");
  cmd->add_option("--api-ca-file", s.api.ca_file,
                  "--apply: CA bundle (default: the service account's)");
}

bool apply_all(const ApplySettings& s, const std::vector<NodeJudgement>& judgements,
               const char* who) {
  std::optional<kube::ApiClient> api;
  try {
    auto config = kube::in_cluster_config(s.api);
    config.user_agent = "railyard-validate";
    api.emplace(config);
  } catch (const std::exception& e) {
    std::cerr << "railyard-validate " << who << ": --apply: " << escape_controls(e.what()) << "\n";
    return false;
  }
  const ApplyOptions options{kube::rfc3339_now(), s.effect};
  bool ok = true;
  for (const auto& j : judgements) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = apply_judgement(*api, j, options);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    for (const auto& a : r.actions) std::cout << "apply: " << escape_controls(a) << "\n";
    for (const auto& n : r.notes) std::cout << "apply: " << escape_controls(n) << "\n";
    if (!r.ok) {
      std::cerr << "railyard-validate " << who << ": --apply refused: " << escape_controls(r.error)
                << "\n";
      ok = false;
    } else {
      // The verdict to its last accepted write: bench/validate/apply.sh reads this line.
      std::cout << "apply: Node " << escape_controls(j.node) << " done in " << ms << " ms\n";
    }
  }
  return ok;
}

int apply_node_run(const ApplySettings& s, const Report& report, int rank) {
  // A rank whose benchmarks rank 0 measured knows only half of its node's verdict: a pass of its
  // checks must not lift what rank 0 found. Rank 0 applies; the fleet Job applies for every node.
  if (std::any_of(report.runs.begin(), report.runs.end(),
                  [](const RunOutcome& r) { return r.measured_by_rank0; })) {
    std::cout << "apply: rank " << rank
              << " changed nothing: rank 0 measured the rails and applies its verdict\n";
    return 0;
  }
  const auto judgement = judge_node(report, s.node);
  if (!apply_all(s, {judgement}, "run")) return 2;
  if (s.findings.empty() || judgement.verdict == Verdict::kCouldNotRun) return 0;
  try {
    write_file_atomically(s.findings,
                          rail_findings_json(rail_findings(judgement, kube::rfc3339_now())));
    std::cout << "apply: wrote " << s.findings << " for the device plugin\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "railyard-validate run: " << escape_controls(e.what()) << "\n";
    return 2;
  }
}

}  // namespace railyard::validate
