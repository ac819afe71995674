#include "cni/plugin/ipam.h"

#include <unistd.h>

#include "cni-protocol/error.h"
#include "cni-protocol/version.h"
#include "common/process.h"

namespace railyard::cni {

std::string find_ipam_plugin(const std::string& type, const std::vector<std::string>& cni_path) {
  if (type.empty() || type.find('/') != std::string::npos || type == "." || type == "..") return "";
  for (const auto& dir : cni_path) {
    const std::string p = dir + "/" + type;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

namespace {

// The delegate's stderr is inherited: its logs land where the runtime collects ours.
ProcessResult exec_plugin(const std::string& path, const std::string& command,
                          const std::string& input, std::chrono::milliseconds limit) {
  const std::string type = path.substr(path.rfind('/') + 1);
  ProcessResult o = run_process({path}, {{"CNI_COMMAND", command}}, input, Stderr::kInherit, limit);
  if (o.timed_out)
    throw CniError(kTryAgainLater, "IPAM " + type + " " + command + " did not finish within " +
                                       std::to_string(limit.count() / 1000) +
                                       " s and was killed (the node policy's ipamTimeoutSeconds)");
  return o;
}

}  // namespace

nlohmann::json ipam_exec(const std::string& command, const Env& env, const nlohmann::json& netconf,
                         std::chrono::milliseconds limit) {
  const std::string type = netconf.at("ipam").at("type").get<std::string>();
  const std::string path = find_ipam_plugin(type, env.path);
  if (path.empty())
    throw CniError(kInvalidConfig, "IPAM plugin '" + type + "' not found in CNI_PATH");
  const ProcessResult o = exec_plugin(path, command, netconf.dump(), limit);
  if (o.exit_code != 0) {
    auto err = nlohmann::json::parse(o.out, nullptr, false);
    if (err.is_object() && err.contains("msg"))
      throw CniError(err.value("code", static_cast<int>(kInternal)),
                     "IPAM " + type + " " + command + ": " + err.value("msg", std::string()),
                     err.value("details", std::string()));
    throw CniError(kInternal,
                   "IPAM " + type + " " + command + " exited " + std::to_string(o.exit_code),
                   o.out);
  }
  if (command != "ADD") return nullptr;
  auto result = nlohmann::json::parse(o.out, nullptr, false);
  if (!result.is_object())
    throw CniError(kDecodeFailure, "IPAM " + type + " returned no JSON result", o.out);
  return result;
}

nlohmann::json negotiate_ipam_version(const Env& env, nlohmann::json netconf,
                                      std::chrono::milliseconds limit) {
  const std::string type = netconf.at("ipam").at("type").get<std::string>();
  const std::string path = find_ipam_plugin(type, env.path);
  if (path.empty())
    throw CniError(kInvalidConfig, "IPAM plugin '" + type + "' not found in CNI_PATH");
  const std::string ours = netconf.value("cniVersion", std::string(kLatestVersion));
  if (!at_least(ours, "1.1.0")) return netconf;
  const ProcessResult o =
      exec_plugin(path, "VERSION", nlohmann::json{{"cniVersion", ours}}.dump(), limit);
  const auto v = nlohmann::json::parse(o.out, nullptr, false);
  if (o.exit_code != 0 || !v.is_object() || !v.contains("supportedVersions") ||
      !v["supportedVersions"].is_array())
    return netconf;  // it will say what it dislikes when called
  std::string best;
  for (const auto& s : v["supportedVersions"]) {
    if (!s.is_string() || !is_supported_version(s.get<std::string>())) continue;
    const std::string cand = s.get<std::string>();
    if (at_least(ours, cand) && (best.empty() || at_least(cand, best))) best = cand;
  }
  if (!best.empty()) netconf["cniVersion"] = best;
  return netconf;
}

}  // namespace railyard::cni
