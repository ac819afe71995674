// Files that readers in other processes must never see half written: written aside in the same
// directory, then renamed over the name. The DRA driver's state and CDI specs, and the files it
// and railyard-cni hand each other (dra/handoff.h).
#pragma once

#include <filesystem>
#include <string_view>

namespace railyard {

// Creates the directory when missing. `durable` also fsyncs the file and the directory (state
// that must outlive a power loss). Throws std::runtime_error naming the file and the reason.
void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           unsigned mode = 0644, bool durable = false);

// Removes the file; a file already gone is fine. Throws std::runtime_error for anything else.
void remove_file(const std::filesystem::path& path);

}  // namespace railyard
