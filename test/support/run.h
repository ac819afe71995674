// Runs a program as a runtime or an operator would: argv, extra environment, stdin; collects
// its exit status, stdout and stderr (common/process.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/process.h"

namespace railyard::testing {

using RunResult = railyard::ProcessResult;

inline RunResult run(const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& env = {},
                     const std::string& input = "") {
  return railyard::run_process(argv, env, input);
}

}  // namespace railyard::testing
