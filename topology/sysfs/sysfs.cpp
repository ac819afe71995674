#include "topology/sysfs/sysfs.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace railyard::topology {

fs::path sysfs_root_from(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv("RAILYARD_SYSFS_ROOT"); env && *env) return env;
  return "/";
}

Sysfs::Sysfs(fs::path root) : root_(std::move(root)) {
  std::error_code ec;
  fs::path canon = fs::canonical(root_, ec);
  if (!ec) root_ = canon;
  root_prefix_ = root_ == "/" ? "" : root_.string();
}

fs::path Sysfs::sys(std::string_view rel) const {
  return root_ / "sys" / rel;
}

std::string Sysfs::display(const fs::path& p) const {
  const std::string s = p.string();
  if (!root_prefix_.empty() && s.rfind(root_prefix_, 0) == 0) return s.substr(root_prefix_.size());
  return s;
}

namespace {

struct linux_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

Attr read_at(int dirfd, const char* rel) {
  Attr a;
  int fd = ::openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return a;
    a.status = Attr::Status::kUnreadable;
    a.value = std::strerror(errno);
    return a;
  }
  char buf[4096];
  std::string out;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      a.status = Attr::Status::kUnreadable;
      a.value = std::strerror(errno);
      ::close(fd);
      return a;
    }
    out.append(buf, static_cast<size_t>(n));
    // A short read is the whole attribute (sysfs fills a page in one read); saves a syscall.
    if (n == 0 || static_cast<size_t>(n) < sizeof buf) break;
  }
  ::close(fd);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\t'))
    out.pop_back();
  a.status = Attr::Status::kOk;
  a.value = std::move(out);
  return a;
}

// Raw getdents64: readdir() would add an fstat and an fcntl to every listing, and discovery lists
// a few directories per VF.
std::vector<std::string> list_at(int dirfd, const char* rel) {
  std::vector<std::string> names;
  int fd = ::openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return names;
  alignas(8) char buf[32768];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      const auto* e = reinterpret_cast<const linux_dirent64*>(buf + off);
      off += e->d_reclen;
      const char* name = e->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      names.emplace_back(name);
    }
    // The kernel fills the buffer while entries fit: room left for a maximal entry means the
    // directory is exhausted, and the usual empty read that says so can be skipped.
    if (sizeof buf - static_cast<size_t>(n) > sizeof(linux_dirent64) + NAME_MAX + 1) break;
  }
  ::close(fd);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> readlink_at(int dirfd, const char* rel) {
  char buf[PATH_MAX];
  ssize_t n = ::readlinkat(dirfd, rel, buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

// sysfs links are relative and point at real directories ("../../../devices/pci0000:15/..."),
// so lexical normalisation resolves them; realpath() would lstat every component.
fs::path Sysfs::link_target(const fs::path& link, const char* target) const {
  const fs::path t(target);
  return t.is_absolute() ? root_ / t.relative_path() : (link.parent_path() / t).lexically_normal();
}

std::optional<Dir> Sysfs::open_dir(const fs::path& dir) const {
  int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  return Dir(dir, fd);
}

Dir::~Dir() {
  if (fd_ >= 0) ::close(fd_);
}

Attr Dir::read(const std::string& rel) const {
  return read_at(fd_, rel.c_str());
}

std::vector<std::string> Dir::list(const std::string& rel) const {
  return list_at(fd_, rel.c_str());
}

std::optional<std::string> Dir::link_name(const std::string& rel) const {
  auto target = readlink_at(fd_, rel.c_str());
  if (!target) return std::nullopt;
  // A plain string cut: fs::path would split every component, and discovery asks this once per
  // PCI function (the physfn test of every VF).
  const size_t slash = target->find_last_of('/');
  return slash == std::string::npos ? *target : target->substr(slash + 1);
}

bool Dir::exists(const std::string& rel) const {
  struct stat st;
  return ::fstatat(fd_, rel.c_str(), &st, 0) == 0;
}

std::optional<fs::path> Dir::link_target(const Sysfs& sysfs, const std::string& rel) const {
  auto target = readlink_at(fd_, rel.c_str());
  if (!target) return std::nullopt;
  return sysfs.link_target(path_ / rel, target->c_str());
}

}  // namespace railyard::topology
