#include "cni-protocol/plugin.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <iostream>
#include <iterator>

#include "cni-protocol/error.h"
#include "cni-protocol/logging.h"
#include "cni-protocol/version.h"

namespace railyard::cni {
namespace {

using nlohmann::json;

json error_object(const std::string& version, int code, const std::string& msg,
                  const std::string& details) {
  json e = {{"cniVersion", version}, {"code", code}, {"msg", msg}};
  if (!details.empty()) e["details"] = details;
  return e;
}

// The version to answer in: the config's when it is one we speak, else our latest.
std::string answer_version(const json& config) {
  if (config.is_object() && config.contains("cniVersion") && config["cniVersion"].is_string() &&
      is_supported_version(config["cniVersion"].get<std::string>()))
    return config["cniVersion"].get<std::string>();
  return kLatestVersion;
}

Request parse_request(const Env& env, const std::string& stdin_text, json& config_out) {
  Request req;
  req.env = env;
  try {
    config_out = json::parse(stdin_text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e999
    throw CniError(kDecodeFailure, "network configuration on stdin is not valid JSON", e.what());
  }
  if (!config_out.is_object())
    throw CniError(kDecodeFailure, "network configuration must be a JSON object");
  req.config = config_out;
  if (!config_out.contains("cniVersion") || !config_out["cniVersion"].is_string())
    throw CniError(kDecodeFailure, "network configuration has no cniVersion string");
  req.version = config_out["cniVersion"].get<std::string>();
  if (!is_supported_version(req.version))
    throw CniError(kIncompatibleVersion, "cniVersion '" + req.version + "' is not supported",
                   "supported: 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0");
  if ((env.command == Command::kStatus || env.command == Command::kGc) &&
      !at_least(req.version, "1.1.0"))
    throw CniError(kIncompatibleVersion,
                   std::string(to_string(env.command)) + " needs cniVersion 1.1.0 or later");
  if (config_out.contains("type") && !config_out["type"].is_string())
    throw CniError(kInvalidConfig, "'type' must be a string");
  // The spec requires a name; IPAM plugins key their state by it (host-local's dataDir/<name>),
  // so a missing or path-like one is refused here, before anything is touched.
  if (!config_out.contains("name") || config_out["name"].is_null())
    throw CniError(kInvalidConfig, "network configuration has no 'name'");
  if (!config_out["name"].is_string()) throw CniError(kInvalidConfig, "'name' must be a string");
  if (!valid_network_name(config_out["name"].get<std::string>()))
    throw CniError(kInvalidConfig,
                   "'name' '" + config_out["name"].get<std::string>() +
                       "' is not a network name (a letter or digit, then letters, digits, '_', "
                       "'.', '-')");
  if (config_out.contains("prevResult") && !config_out["prevResult"].is_null())
    req.prev_result = parse_result(config_out["prevResult"]);
  return req;
}

}  // namespace

bool valid_network_name(const std::string& name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  for (unsigned char c : name)
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

int plugin_main(const std::string& name, const Handlers& handlers, std::istream& in,
                std::ostream& out, const Getenv& getenv) {
  json config;
  std::string stdin_text;
  // spdlog's default logger writes to stdout, which carries the result: replace it before
  // anything can log.
  setup_stderr_logging(name);
  try {
    const Env env = parse_env(getenv);
    stdin_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (env.command == Command::kVersion) {
      json cfg = json::parse(stdin_text, nullptr, false);
      out << json{{"cniVersion", answer_version(cfg)}, {"supportedVersions", supported_versions()}}
                 .dump()
          << "\n";
      return 0;
    }
    Request req = parse_request(env, stdin_text, config);
    req.policy = NodePolicy::load(getenv);
    setup_logging(req.config, name, req.policy, env.command != Command::kDel);
    spdlog::debug("{} {} container={} netns={} ifname={}", name, to_string(env.command),
                  env.container_id, env.netns, env.ifname);
    switch (env.command) {
      case Command::kAdd:
        out << handlers.add(req).dump() << "\n";
        break;
      case Command::kDel:
        handlers.del(req);
        break;
      case Command::kCheck:
        if (!at_least(req.version, "0.4.0"))
          throw CniError(kIncompatibleVersion, "CHECK needs cniVersion 0.4.0 or later");
        handlers.check(req);
        break;
      case Command::kStatus:
        if (handlers.status) handlers.status(req);
        break;
      case Command::kGc:
        if (handlers.gc) handlers.gc(req);
        break;
      case Command::kVersion:
        break;
    }
    return 0;
  } catch (const CniError& e) {
    spdlog::error("{}: {}{}", name, e.what(), e.details().empty() ? "" : " (" + e.details() + ")");
    out << error_object(answer_version(config), e.code(), e.what(), e.details()).dump() << "\n";
  } catch (const std::exception& e) {
    spdlog::error("{}: internal error: {}", name, e.what());
    out << error_object(answer_version(config), kInternal, e.what(), "").dump() << "\n";
  }
  return 1;
}

}  // namespace railyard::cni
