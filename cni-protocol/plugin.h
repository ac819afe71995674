// The skeleton every railyard CNI plugin runs in: reads the CNI_* environment and stdin, checks
// the version, dispatches to the command's handler, and writes the result or the spec's error
// object on stdout. Logs never go to stdout (logging.h).
#pragma once

#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cni-protocol/env.h"
#include "cni-protocol/policy.h"
#include "cni-protocol/result.h"

namespace railyard::cni {

struct Request {
  Env env;
  nlohmann::json config;  // the plugin's network configuration from stdin
  std::string version;    // its cniVersion
  std::optional<Result> prev_result;
  NodePolicy policy;  // the node's, never the NAD's (policy.h)
};

struct Handlers {
  std::function<nlohmann::json(const Request&)> add;  // the result object to print
  std::function<void(const Request&)> del;
  std::function<void(const Request&)> check;
  std::function<void(const Request&)> status;  // optional: ready unless it throws
  std::function<void(const Request&)> gc;      // optional: nothing to collect
};

// The spec's network name: a letter or digit, then letters, digits, '_', '.', '-'.
bool valid_network_name(const std::string& name);

// Returns the process exit code: 0, or 1 after printing an error object.
int plugin_main(const std::string& name, const Handlers& handlers, std::istream& in,
                std::ostream& out, const Getenv& getenv);

}  // namespace railyard::cni
