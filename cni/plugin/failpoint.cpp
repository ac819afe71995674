#include "cni/plugin/failpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "cni-protocol/error.h"

namespace railyard::cni {

void failpoint(const char* step) {
  static const char* const wanted = std::getenv("RAILYARD_CNI_FAILPOINT");
  if (wanted && std::strcmp(wanted, step) == 0)
    throw CniError(kInternal, std::string("injected fault after ") + step);
}

void pause_point(const char* step) {
  static const char* const wanted = std::getenv("RAILYARD_CNI_PAUSE");
  if (!wanted) return;
  const std::string w(wanted);
  const auto colon = w.find(':');
  if (colon == std::string::npos || w.compare(0, colon, step) != 0) return;
  // Opening a FIFO for reading waits for its writer; reading waits for the writer to close it.
  const int fd = ::open(w.c_str() + colon + 1, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char b[64];
  while (::read(fd, b, sizeof b) > 0) {
  }
  ::close(fd);
}

}  // namespace railyard::cni
