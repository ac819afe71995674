// Registration with the kubelet: RegisterRequest on <kubelet dir>/kubelet.sock.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace railyard::deviceplugin {

inline constexpr const char* kApiVersion = "v1beta1";
inline constexpr const char* kKubeletSocket = "kubelet.sock";

// Registers `resource`, served on `endpoint` (a socket name in the same directory). Returns an
// empty string on success, else what went wrong (the kubelet's refusal, or no kubelet).
std::string register_resource(const std::filesystem::path& kubelet_socket,
                              const std::string& endpoint, const std::string& resource,
                              std::chrono::milliseconds timeout);

}  // namespace railyard::deviceplugin
