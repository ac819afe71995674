// A directory under $TMPDIR that is removed when the test ends, pass or fail.
#pragma once

#include <filesystem>
#include <string>

namespace railyard::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace railyard::testing
