// Runs a program as a runtime or an operator would: argv, extra environment, stdin; collects
// its exit status, stdout and stderr.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace railyard::testing {

struct RunResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

RunResult run(const std::vector<std::string>& argv,
              const std::map<std::string, std::string>& env = {}, const std::string& input = "");

}  // namespace railyard::testing
