// `--apply` on the command line: its flags, the API server it talks to, and the two ways a run
// ends in it (a node run's verdict, a fleet's judgements), printing what changed.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "kube/api_client.h"
#include "nccl-tests-wrapper/apply/judgement.h"

namespace railyard::validate {

struct ApplySettings {
  bool apply = false;
  kube::ApiConfig api;  // empty fields: the pod's in-cluster configuration
  std::string effect = "NoSchedule";
  std::string node;      // run: this node's name
  std::string findings;  // run: the device plugin's findings file; empty: none written
};

// --apply, --taint-effect, --api-server, --api-token-file, --api-ca-file.
void add_apply_options(CLI::App* cmd, ApplySettings& s);

// Applies each judgement and prints what changed, and how long each took; false when the API
// server refused one (the caller exits 2). `who`: "run" or "fleet", for messages.
bool apply_all(const ApplySettings& s, const std::vector<NodeJudgement>& judgements,
               const char* who);

// The node run's side: a rank whose benchmarks rank 0 measured applies nothing (it knows half
// the verdict); otherwise the judgement is applied and, with `findings`, written for the device
// plugin. 0, or 2 when refused or the file could not be written.
int apply_node_run(const ApplySettings& s, const Report& report, int rank);

}  // namespace railyard::validate
