#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace railyard {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, std::string_view content, unsigned mode,
                           bool durable) {
  std::error_code ec;
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  // Unique per process and call: two writers of one name never share a temporary file.
  static std::atomic<unsigned long> seq{0};
  const fs::path tmp = dir / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()) +
                              "-" + std::to_string(seq.fetch_add(1)));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  bool ok = fd >= 0 &&
            ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) &&
            (!durable || ::fsync(fd) == 0);
  int err = errno;
  if (fd >= 0) ::close(fd);
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
  }
  if (!durable) return;
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void remove_file(const fs::path& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw std::runtime_error("cannot remove " + path.string() + ": " + std::strerror(errno));
}

}  // namespace railyard
