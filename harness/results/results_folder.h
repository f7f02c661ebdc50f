// The results folder: a new one per study, never reusing one that exists.
#pragma once

#include <filesystem>
#include <string>

namespace harness {

// Creates <output>/<experiment>/<UTC timestamp>/ (adding "-2", "-3", ... when that exists
// already); never returns a folder that existed before the call.
std::filesystem::path create_run_directory(const std::filesystem::path& output,
                                           const std::string& experiment);

}  // namespace harness
