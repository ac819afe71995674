#include "cni/plugin/state.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cni-protocol/error.h"
#include "common/atomic_file.h"

namespace railyard::cni {

namespace fs = std::filesystem;
using nlohmann::json;

json AttachmentState::to_json() const {
  return {{"containerID", container_id},
          {"ifname", ifname},
          {"netns", netns},
          {"pci", pci},
          {"hostName", host_name},
          {"originalMac", original_mac},
          {"originalMtu", original_mtu},
          {"originalUp", original_up},
          {"rail", rail},
          {"table", table},
          {"priority", priority},
          {"pfNetdev", pf_netdev},
          {"rdmaDevice", rdma_device},
          {"vfNumber", vf_number},
          {"vfOriginal", vf_original},
          {"ipam", ipam},
          {"result", result},
          {"complete", complete},
          {"bootID", boot_id}};
}

AttachmentState AttachmentState::from_json(const json& j) {
  AttachmentState s;
  s.container_id = j.at("containerID");
  s.ifname = j.at("ifname");
  s.netns = j.value("netns", "");
  s.pci = j.value("pci", "");
  s.host_name = j.at("hostName");
  s.original_mac = j.value("originalMac", "");
  s.original_mtu = j.value("originalMtu", 0);
  s.original_up = j.value("originalUp", false);
  s.rail = j.value("rail", -1);
  s.table = j.value("table", 0);
  s.priority = j.value("priority", 0);
  s.pf_netdev = j.value("pfNetdev", "");
  s.rdma_device = j.value("rdmaDevice", "");
  s.vf_number = j.value("vfNumber", -1);
  s.vf_original = j.value("vfOriginal", json());
  s.boot_id = j.value("bootID", "");
  s.ipam = j.value("ipam", json());
  s.result = j.value("result", json());
  s.complete = j.value("complete", false);
  return s;
}

std::string current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

StateStore::StateStore(std::string dir) : dir_(std::move(dir)) {}

std::string StateStore::path(const std::string& container_id, const std::string& ifname) const {
  // Both were validated (container ID: [A-Za-z0-9_.-], ifname: no '/'), so this stays in dir_.
  return dir_ + "/" + container_id + "_" + ifname + ".json";
}

std::optional<AttachmentState> StateStore::load(const std::string& container_id,
                                                const std::string& ifname) const {
  std::ifstream in(path(container_id, ifname));
  if (!in) return std::nullopt;
  try {
    return AttachmentState::from_json(json::parse(in));
  } catch (const std::exception& e) {
    throw CniError(kIoFailure,
                   "state file " + path(container_id, ifname) + " is corrupt: " + e.what());
  }
}

std::optional<AttachmentState> StateStore::load_or_set_aside(const std::string& container_id,
                                                             const std::string& ifname) const {
  try {
    return load(container_id, ifname);
  } catch (const CniError& e) {
    const std::string p = path(container_id, ifname);
    if (::rename(p.c_str(), (p + ".corrupt").c_str()) != 0)
      throw CniError(kIoFailure, std::string(e.what()) +
                                     "; it cannot be set aside either: " + std::strerror(errno));
    spdlog::warn("{}; set aside as {}.corrupt, going on as if there were no record", e.what(), p);
    return std::nullopt;
  }
}

void StateStore::save(const AttachmentState& s, Durability d) const {
  try {
    write_file_atomically(path(s.container_id, s.ifname), s.to_json().dump(2) + "\n", 0600,
                          d == Durability::kDurable);
  } catch (const std::runtime_error& e) {
    throw CniError(kIoFailure, std::string("state: ") + e.what());
  }
}

void StateStore::remove(const std::string& container_id, const std::string& ifname) const {
  ::unlink(path(container_id, ifname).c_str());
}

std::vector<AttachmentState> StateStore::all() const {
  std::vector<AttachmentState> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    try {
      out.push_back(AttachmentState::from_json(json::parse(in)));
    } catch (const std::exception&) {
      // A corrupt file names no attachment we could clean up; leave it for a person to see.
    }
  }
  return out;
}

std::optional<AttachmentState> StateStore::holder(const std::string& pci,
                                                  const std::string& host_name) const {
  for (auto& s : all())
    if ((!pci.empty() && s.pci == pci) || (pci.empty() && s.host_name == host_name)) return s;
  return std::nullopt;
}

DeviceLock::DeviceLock(const std::string& dir, const std::string& key) {
  std::error_code ec;
  fs::create_directories(dir + "/locks", ec);
  const std::string p = dir + "/locks/" + key + ".lock";
  fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw CniError(kIoFailure, "cannot open lock " + p + ": " + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

DeviceLock::~DeviceLock() {
  ::close(fd_);
}

}  // namespace railyard::cni
