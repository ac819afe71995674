#include "cni/plugin/ipam.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cni/protocol/error.h"
#include "cni/protocol/version.h"

extern char** environ;

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

struct Output {
  int status = -1;
  std::string out;
};

Output exec_plugin(const std::string& path, const std::string& command, const std::string& input) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw CniError(kIoFailure, std::string("pipe: ") + std::strerror(errno));
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CNI_COMMAND=", 12) != 0) env_strings.emplace_back(*e);
  env_strings.push_back("CNI_COMMAND=" + command);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw CniError(kIoFailure, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);  // its stderr stays ours: it reaches the runtime's log as ours does
    char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
    ::execve(path.c_str(), argv, envp.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  for (size_t done = 0; done < input.size();) {
    ssize_t n = ::write(in[1], input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(in[1]);
  Output o;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    o.out.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return o;
}

}  // namespace

nlohmann::json ipam_exec(const std::string& command, const Env& env,
                         const nlohmann::json& netconf) {
  const std::string type = netconf.at("ipam").at("type").get<std::string>();
  const std::string path = find_ipam_plugin(type, env.path);
  if (path.empty())
    throw CniError(kInvalidConfig, "IPAM plugin '" + type + "' not found in CNI_PATH");
  const Output o = exec_plugin(path, command, netconf.dump());
  if (o.status != 0) {
    auto err = nlohmann::json::parse(o.out, nullptr, false);
    if (err.is_object() && err.contains("msg"))
      throw CniError(err.value("code", static_cast<int>(kInternal)),
                     "IPAM " + type + " " + command + ": " + err.value("msg", std::string()),
                     err.value("details", std::string()));
    throw CniError(kInternal,
                   "IPAM " + type + " " + command + " exited " + std::to_string(o.status), o.out);
  }
  if (command != "ADD") return nullptr;
  auto result = nlohmann::json::parse(o.out, nullptr, false);
  if (!result.is_object())
    throw CniError(kDecodeFailure, "IPAM " + type + " returned no JSON result", o.out);
  return result;
}

nlohmann::json negotiate_ipam_version(const Env& env, nlohmann::json netconf) {
  const std::string type = netconf.at("ipam").at("type").get<std::string>();
  const std::string path = find_ipam_plugin(type, env.path);
  if (path.empty())
    throw CniError(kInvalidConfig, "IPAM plugin '" + type + "' not found in CNI_PATH");
  const std::string ours = netconf.value("cniVersion", std::string(kLatestVersion));
  if (!at_least(ours, "1.1.0")) return netconf;
  const Output o = exec_plugin(path, "VERSION", nlohmann::json{{"cniVersion", ours}}.dump());
  const auto v = nlohmann::json::parse(o.out, nullptr, false);
  if (o.status != 0 || !v.is_object() || !v.contains("supportedVersions") ||
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
