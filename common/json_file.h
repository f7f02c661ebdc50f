// Reading a JSON file that a person or another program wrote (results folders, profiles,
// traces, plans): a malformed one is bad input, named by its file:line:column.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace harness {

// The parsed file. InputError "FILE: cannot read", "FILE:LINE:COLUMN: malformed JSON: why", or
// "FILE: malformed JSON: number overflow parsing '1e999'".
nlohmann::json read_json_file(const std::filesystem::path& path);

// nlohmann's parse and dump are templates that cost each translation unit that uses them ~2 s
// of compile at -O2 (its parser, lexer and serializer instantiated and optimised again); every
// file parses and writes JSON through these two, compiled once, here.

// `nlohmann::json::parse(text)`: throws nlohmann::json::parse_error (and out_of_range for a
// number past double's range) as it does.
nlohmann::json parse_json(std::string_view text);
// `value.dump(indent)`: -1 for one line, N for N spaces a level.
std::string json_text(const nlohmann::json& value, int indent = -1);

}  // namespace harness
