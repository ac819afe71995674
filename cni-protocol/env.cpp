#include "cni-protocol/env.h"

#include <cctype>
#include <cstdlib>

#include "cni-protocol/error.h"

namespace railyard::cni {

Getenv process_getenv() {
  return [](const std::string& k) -> std::optional<std::string> {
    const char* v = std::getenv(k.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

bool valid_ifname(const std::string& name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (unsigned char c : name)
    if (c == '/' || c == ':' || std::isspace(c) || c < 0x20) return false;
  return true;
}

const char* to_string(Command c) {
  switch (c) {
    case Command::kAdd:
      return "ADD";
    case Command::kDel:
      return "DEL";
    case Command::kCheck:
      return "CHECK";
    case Command::kVersion:
      return "VERSION";
    case Command::kStatus:
      return "STATUS";
    case Command::kGc:
      return "GC";
  }
  return "?";
}

namespace {

[[noreturn]] void bad(const std::string& msg) {
  throw CniError(kInvalidEnvironment, msg);
}

bool valid_container_id(const std::string& id) {
  // The spec: alphanumerics, then alphanumerics, '_', '.', '-'.
  if (id.empty() || !std::isalnum(static_cast<unsigned char>(id[0]))) return false;
  for (unsigned char c : id)
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

}  // namespace

Env parse_env(const Getenv& getenv) {
  Env env;
  const auto cmd = getenv("CNI_COMMAND");
  if (!cmd || cmd->empty()) bad("CNI_COMMAND is not set");
  if (*cmd == "ADD")
    env.command = Command::kAdd;
  else if (*cmd == "DEL")
    env.command = Command::kDel;
  else if (*cmd == "CHECK")
    env.command = Command::kCheck;
  else if (*cmd == "VERSION")
    env.command = Command::kVersion;
  else if (*cmd == "STATUS")
    env.command = Command::kStatus;
  else if (*cmd == "GC")
    env.command = Command::kGc;
  else
    bad("CNI_COMMAND '" + *cmd + "' is not one of ADD, DEL, CHECK, VERSION, STATUS, GC");

  if (auto p = getenv("CNI_PATH")) {
    std::string cur;
    for (char c : *p + ":") {
      if (c == ':') {
        if (!cur.empty()) env.path.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
  }
  if (env.command == Command::kVersion || env.command == Command::kStatus ||
      env.command == Command::kGc)
    return env;

  env.container_id = getenv("CNI_CONTAINERID").value_or("");
  if (env.container_id.empty()) bad("CNI_CONTAINERID is not set");
  if (!valid_container_id(env.container_id))
    bad("CNI_CONTAINERID '" + env.container_id + "' has characters other than [A-Za-z0-9_.-]");
  env.ifname = getenv("CNI_IFNAME").value_or("");
  if (env.ifname.empty()) bad("CNI_IFNAME is not set");
  if (!valid_ifname(env.ifname))
    bad("CNI_IFNAME '" + env.ifname +
        "' is not a valid interface name (1-15 bytes, no '/', ':' or spaces)");
  env.netns = getenv("CNI_NETNS").value_or("");
  if (env.netns.empty() && env.command != Command::kDel) bad("CNI_NETNS is not set");

  if (auto a = getenv("CNI_ARGS"); a && !a->empty()) {
    size_t start = 0;
    while (start <= a->size()) {
      size_t end = a->find(';', start);
      if (end == std::string::npos) end = a->size();
      const std::string kv = a->substr(start, end - start);
      if (!kv.empty()) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) bad("CNI_ARGS: '" + kv + "' is not KEY=VALUE");
        env.args[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      start = end + 1;
    }
  }
  return env;
}

}  // namespace railyard::cni
