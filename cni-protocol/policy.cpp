#include "cni-protocol/policy.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cni-protocol/error.h"
#include "common/log_escape.h"

namespace railyard::cni {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A policy file is a few lines; anything larger is not one.
constexpr std::streamsize kMaxPolicyBytes = 64 * 1024;

std::string absolute_dir(const json& j, const char* key, const std::string& fallback,
                         const std::string& file) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_string() || j[key].get<std::string>().empty() ||
      j[key].get<std::string>().front() != '/')
    throw CniError(kInvalidConfig,
                   "node policy " + file + ": '" + key + "' must be an absolute directory path");
  return fs::path(j[key].get<std::string>()).lexically_normal().string();
}

bool lies_in(const fs::path& p, const fs::path& dir) {
  auto [d, q] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
  // A trailing '/' in dir leaves an empty last element.
  return d == dir.end() || (std::next(d) == dir.end() && d->empty());
}

}  // namespace

NodePolicy NodePolicy::parse(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw CniError(kInvalidConfig, "node policy " + file + " is not valid JSON", e.what());
  }
  if (!j.is_object()) throw CniError(kInvalidConfig, "node policy " + file + " is not an object");
  for (const auto& [k, v] : j.items())
    if (k != "stateDir" && k != "draDir" && k != "logDir" && k != "netdevs" &&
        k != "ipamTimeoutSeconds")
      throw CniError(kInvalidConfig,
                     "node policy " + file + ": unknown key '" + escape_controls(k) +
                         "' (stateDir, draDir, logDir, netdevs, ipamTimeoutSeconds)");
  NodePolicy p;
  p.file = file;
  p.state_dir = absolute_dir(j, "stateDir", p.state_dir, file);
  p.dra_dir = absolute_dir(j, "draDir", p.dra_dir, file);
  p.log_dir = absolute_dir(j, "logDir", p.log_dir, file);
  if (j.contains("netdevs")) {
    if (!j["netdevs"].is_array())
      throw CniError(kInvalidConfig, "node policy " + file + ": 'netdevs' must be a list of names");
    for (const auto& n : j["netdevs"]) {
      if (!n.is_string() || (n != "*" && !valid_ifname(n.get<std::string>())))
        throw CniError(kInvalidConfig, "node policy " + file +
                                           ": 'netdevs' holds something that is not an "
                                           "interface name: " +
                                           escape_controls(n.dump()));
      if (n == "*")
        p.any_netdev = true;
      else
        p.netdevs.push_back(n.get<std::string>());
    }
  }
  if (j.contains("ipamTimeoutSeconds")) {
    const json& t = j["ipamTimeoutSeconds"];
    if (!t.is_number_integer() || t.get<int64_t>() < 1 || t.get<int64_t>() > 600)
      throw CniError(kInvalidConfig, "node policy " + file +
                                         ": 'ipamTimeoutSeconds' must be an integer from 1 to 600");
    p.ipam_timeout = std::chrono::seconds(t.get<int64_t>());
  }
  return p;
}

NodePolicy NodePolicy::load(const Getenv& getenv) {
  const auto named = getenv("RAILYARD_CNI_POLICY");
  const std::string file = named && !named->empty() ? *named : kDefaultPolicyFile;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    // The default file missing: the built-in defaults, as strict as the file's. A file named on
    // purpose must be there.
    if (!named || named->empty()) {
      NodePolicy p;
      p.file = "";
      return p;
    }
    throw CniError(kInvalidConfig, "node policy " + file + " (RAILYARD_CNI_POLICY) cannot be read");
  }
  std::string text(kMaxPolicyBytes + 1, '\0');
  in.read(text.data(), kMaxPolicyBytes + 1);
  if (in.gcount() > kMaxPolicyBytes)
    throw CniError(kInvalidConfig, "node policy " + file + " is larger than 64 KiB");
  text.resize(static_cast<size_t>(in.gcount()));
  return parse(text, file);
}

bool NodePolicy::netdev_allowed(const std::string& name) const {
  return any_netdev || std::find(netdevs.begin(), netdevs.end(), name) != netdevs.end();
}

std::string NodePolicy::where() const {
  return file.empty()
             ? "(node policy: built-in defaults; " + std::string(kDefaultPolicyFile) + " is absent)"
             : "(node policy " + file + ")";
}

std::string NodePolicy::log_file(const std::string& wanted) const {
  const std::string shown = escape_controls(wanted);
  auto refuse = [&](const std::string& why) {
    throw CniError(kInvalidConfig,
                   "logFile '" + shown + "' " + why + ": logs go under " + log_dir + " " + where());
  };
  if (wanted.empty() || wanted.front() != '/') refuse("is not an absolute path");
  const fs::path p(wanted);
  for (const auto& part : p)
    if (part == "..") refuse("holds '..'");
  const fs::path normal = p.lexically_normal();
  if (!lies_in(normal, fs::path(log_dir)) || normal == fs::path(log_dir) ||
      normal.filename().empty())
    refuse("is not a file inside the node's log directory");
  // The folder must exist already, and no component from the log directory down may be a
  // symbolic link: the file is opened as root, and a link could point anywhere.
  fs::path at(log_dir);
  const fs::path rel = normal.lexically_relative(log_dir);
  struct stat st {};
  if (::stat(at.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    refuse("cannot be written: the log directory does not exist");
  for (auto it = rel.begin(); it != rel.end(); ++it) {
    at /= *it;
    const bool last = std::next(it) == rel.end();
    if (::lstat(at.c_str(), &st) != 0) {
      if (last) break;  // the file itself is created on first use
      refuse("cannot be written: its folder " + escape_controls(at.parent_path().string()) +
             " has no " + escape_controls(it->string()));
    }
    if (S_ISLNK(st.st_mode)) refuse("passes through a symbolic link");
    if (last && !S_ISREG(st.st_mode)) refuse("is not a regular file");
    if (!last && !S_ISDIR(st.st_mode)) refuse("is under something that is not a folder");
  }
  return normal.string();
}

}  // namespace railyard::cni
