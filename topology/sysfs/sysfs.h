// Reads sysfs under a root directory, so that a fixture tree and a live node (root "/") go
// through the same code. Reads are plain POSIX calls: discovery of a large node reads thousands
// of small attributes and must stay fast.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railyard::topology {

namespace fs = std::filesystem;

// The root comes from the flag when given, else RAILYARD_SYSFS_ROOT, else "/".
fs::path sysfs_root_from(const std::string& flag_value);

struct Attr {
  enum class Status { kOk, kMissing, kUnreadable };
  Status status = Status::kMissing;
  std::string value;  // trimmed of trailing whitespace when kOk; the error text when kUnreadable
  bool ok() const { return status == Status::kOk; }
};

class Sysfs;

// An open sysfs directory. Reads relative to it walk one or two path components instead of a
// dozen, which is most of discovery's cost on a node with hundreds of VFs.
class Dir {
 public:
  Dir(fs::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~Dir();
  Dir(Dir&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) { o.fd_ = -1; }
  Dir& operator=(Dir&&) = delete;
  Dir(const Dir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(std::string_view rel) const { return path_ / rel; }
  Attr read(const std::string& rel) const;
  // Entry names of a directory, sorted; empty when it does not exist.
  std::vector<std::string> list(const std::string& rel) const;
  // The last component of a symlink's target ("mlx5_core" for driver -> ../../bus/.../mlx5_core).
  std::optional<std::string> link_name(const std::string& rel) const;
  bool exists(const std::string& rel) const;
  // Where the symlink `rel` points (lexically; open_dir() tells whether it exists); nullopt when
  // `rel` is not a symlink.
  std::optional<fs::path> link_target(const Sysfs& sysfs, const std::string& rel) const;

 private:
  fs::path path_;
  int fd_;
};

class Sysfs {
 public:
  explicit Sysfs(fs::path root);

  const fs::path& root() const { return root_; }
  // root/sys/<rel>
  fs::path sys(std::string_view rel) const;
  // The path as the user knows it: "/sys/..." without the fixture root, for messages.
  std::string display(const fs::path& p) const;

  // Opens a directory for relative reads; nullopt when it does not exist.
  std::optional<Dir> open_dir(const fs::path& dir) const;

 private:
  friend class Dir;
  fs::path link_target(const fs::path& link, const char* target) const;
  fs::path root_;
  std::string root_prefix_;  // canonical root as a string, "" for "/"
};

}  // namespace railyard::topology
