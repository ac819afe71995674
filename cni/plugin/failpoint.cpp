#include "cni/plugin/failpoint.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "cni/protocol/error.h"

namespace railyard::cni {

void failpoint(const char* step) {
  static const char* const wanted = std::getenv("RAILYARD_CNI_FAILPOINT");
  if (wanted && std::strcmp(wanted, step) == 0)
    throw CniError(kInternal, std::string("injected fault after ") + step);
}

}  // namespace railyard::cni
