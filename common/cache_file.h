// Where the harness keeps what it measured or asked once per machine, so that the next command
// need not do it again: the file a variable names, else $XDG_CACHE_HOME/harness/NAME, else
// ~/.cache/harness/NAME.
#pragma once

#include <filesystem>

namespace harness {

// `variable`'s value where it is set and not empty, else the user's cache folder's `file_name`.
std::filesystem::path cache_file(const char* variable, const char* file_name);

}  // namespace harness
