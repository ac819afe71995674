// The CNI_* environment a runtime sets, validated per command with the spec's error codes.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace railyard::cni {

enum class Command { kAdd, kDel, kCheck, kVersion, kStatus, kGc };

struct Env {
  Command command = Command::kVersion;
  std::string container_id;
  std::string netns;  // may be empty for DEL
  std::string ifname;
  std::map<std::string, std::string> args;  // CNI_ARGS, "K=V;K2=V2"
  std::vector<std::string> path;            // CNI_PATH, split on ':'
};

using Getenv = std::function<std::optional<std::string>(const std::string&)>;
Getenv process_getenv();

// Throws CniError(kInvalidEnvironment) naming the variable that is missing or malformed.
Env parse_env(const Getenv& getenv);

// Interface names as the kernel accepts them: 1-15 bytes, no '/', ':' or whitespace, not . or ..
bool valid_ifname(const std::string& name);

const char* to_string(Command c);

}  // namespace railyard::cni
