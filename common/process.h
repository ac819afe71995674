// Runs a program and collects what it prints: the CNI plugin's IPAM delegation, the validator's
// benchmark runs and the tests all exec programs the same way.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace railyard {

enum class Stderr {
  kCapture,  // into ProcessResult::err
  kMerge,    // into ProcessResult::out, interleaved as printed
  kInherit,  // to our own stderr (a delegate's logs reach the same place as ours)
};

struct ProcessResult {
  // The exit status; 128 + signal when killed; 127 when it could not be started.
  int exit_code = -1;
  std::string out;
  std::string err;
  bool timed_out = false;  // killed (SIGKILL) when it outlived the limit
};

// argv[0] is looked up in PATH. The child gets our environment with `env` set on top (built here,
// before fork: nothing unsafe runs between fork and exec, even in a multi-threaded caller) and
// `input` on stdin. With a `limit` above zero, a child still running (or its output still open)
// after it is killed, and what it printed so far returned with timed_out set.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {},
                          const std::string& input = "", Stderr stderr_mode = Stderr::kCapture,
                          std::chrono::milliseconds limit = std::chrono::milliseconds::zero());

}  // namespace railyard
