// Reading a JSON file that a person or another program wrote (results folders, profiles,
// traces, plans): a malformed one is bad input, named by its file:line:column.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace harness {

// The parsed file. InputError "FILE: cannot read", "FILE:LINE:COLUMN: malformed JSON: why", or
// "FILE: malformed JSON: number overflow parsing '1e999'".
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace harness
