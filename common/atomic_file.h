// Writing files so that a reader never sees half of one (write to a temporary name in the
// same folder, then rename), and reading one whole.
#pragma once

#include <filesystem>
#include <string>

namespace harness {

// Writes `content` to `path` atomically; creates parent folders.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

std::string read_file(const std::filesystem::path& path);

}  // namespace harness
