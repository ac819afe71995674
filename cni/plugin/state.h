// What railyard-cni knows about an attachment, written before it touches anything so that DEL
// can put everything back even after a crash mid-ADD. One JSON file per (container, ifname),
// written atomically (temp file, fsync, rename, fsync of the directory). A per-device lock
// serialises everything done to one device.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace railyard::cni {

struct AttachmentState {
  std::string container_id, ifname, netns;
  std::string pci, host_name;  // the device and its name in the host
  std::string original_mac;
  int original_mtu = 0;
  bool original_up = false;
  int rail = -1, table = 0, priority = 0;
  std::string pf_netdev;
  std::string rdma_device;  // set when it was moved into the pod (exclusive RDMA netns mode)
  int vf_number = -1;
  nlohmann::json vf_original;  // the VF's admin settings before ADD, when changed
  nlohmann::json ipam;         // the network config given to the IPAM plugin (null: none)
  nlohmann::json result;       // the result returned to the runtime (once ADD completed)
  bool complete = false;       // false while ADD is under way
  // The kernel's boot the record was made in (/proc/sys/kernel/random/boot_id). After a reboot
  // the pod's namespace and the VF's admin settings are gone, and the VF may serve another pod:
  // DEL then releases only the IPAM lease and the record.
  std::string boot_id;

  // The device's lock, as Device::lock_key() names it.
  std::string lock_key() const { return pci.empty() ? "netdev-" + host_name : pci; }
  nlohmann::json to_json() const;
  static AttachmentState from_json(const nlohmann::json& j);
};

// This boot's id ("" when the kernel does not say).
std::string current_boot_id();

class StateStore {
 public:
  explicit StateStore(std::string dir);
  // Throws CniError(kIoFailure) when the record is unreadable (empty, cut short, not ours).
  std::optional<AttachmentState> load(const std::string& container_id,
                                      const std::string& ifname) const;
  // As load(), but an unreadable record is renamed aside (<name>.json.corrupt, kept for a
  // person) with a warning and reported as absent: DEL must finish whatever the file holds.
  std::optional<AttachmentState> load_or_set_aside(const std::string& container_id,
                                                   const std::string& ifname) const;
  // Atomic always (written aside, renamed over). kDurable also fsyncs the file and the
  // directory: the first record of an ADD, written before anything is touched, which DEL needs
  // after any crash. Later updates name what a process crash must undo (page cache survives
  // it); after a power loss the pod's namespace, its routing and the VF's admin settings are
  // gone anyway, and the first record still lets DEL release the device and the IPAM lease.
  enum class Durability { kAtomic, kDurable };
  void save(const AttachmentState& s, Durability d) const;
  void remove(const std::string& container_id, const std::string& ifname) const;
  std::vector<AttachmentState> all() const;
  // The attachment that holds this device, if any.
  std::optional<AttachmentState> holder(const std::string& pci, const std::string& host_name) const;

 private:
  std::string path(const std::string& container_id, const std::string& ifname) const;
  std::string dir_;
};

// An exclusive flock on <dir>/locks/<key>.lock for the lifetime of the object.
class DeviceLock {
 public:
  DeviceLock(const std::string& dir, const std::string& key);
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

 private:
  int fd_;
};

}  // namespace railyard::cni
