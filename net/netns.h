// Network namespaces: check that a path is one, and run code inside one on a dedicated thread.
// The calling thread never changes namespace, so nothing can leave it stranded in the pod's.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace railyard::net {

class NetnsError : public std::runtime_error {
 public:
  enum class Kind { kMissing, kNotNetns, kEnterFailed };
  NetnsError(Kind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Throws NetnsError(kMissing) when the path does not exist, kNotNetns when it is not a network
// namespace (nsfs) file.
void check_netns_path(const std::string& path);

// Runs `fn` on a new thread that has entered the namespace at `path`; exceptions come back.
void run_in_netns(const std::string& path, const std::function<void()>& fn);

template <class F>
auto in_netns(const std::string& path, F&& fn) -> decltype(fn()) {
  if constexpr (std::is_void_v<decltype(fn())>) {
    run_in_netns(path, fn);
  } else {
    std::optional<decltype(fn())> out;
    run_in_netns(path, [&] { out.emplace(fn()); });
    return std::move(*out);
  }
}

}  // namespace railyard::net
