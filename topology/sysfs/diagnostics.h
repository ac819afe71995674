// Problems found while reading sysfs. Discovery never guesses: what it could not read is
// reported here, naming the path, and an Error means the model is incomplete.
#pragma once

#include <string>
#include <vector>

namespace railyard::topology {

struct Diagnostic {
  enum class Level { kWarning, kError };
  Level level;
  std::string path;     // the sysfs path that was wrong, as seen under the root
  std::string message;  // what was wrong with it

  std::string to_string() const;
};

class Diagnostics {
 public:
  void warn(std::string path, std::string message);
  void error(std::string path, std::string message);
  bool has_errors() const;
  const std::vector<Diagnostic>& all() const { return items_; }

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace railyard::topology
