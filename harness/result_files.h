// The results folder: creating it without ever reusing one, and writing files so that a
// reader never sees half of one (write to a temporary name in the same folder, then rename).
#pragma once

#include <filesystem>
#include <string>

namespace harness {

// Writes `content` to `path` atomically; creates parent folders.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

std::string read_file(const std::filesystem::path& path);

// "20261121T233015Z" for now (UTC).
std::string utc_timestamp_compact();

// Creates <output>/<experiment>/<UTC timestamp>/ (adding "-2", "-3", ... when that exists
// already); never returns a folder that existed before the call.
std::filesystem::path create_run_directory(const std::filesystem::path& output,
                                           const std::string& experiment);

}  // namespace harness
