// Checks for names that come from a user or a file and go on to git, Markdown tables, HTML or a
// terminal: a commit, a branch, a machine's name, a time stamp. Each says why a name is refused,
// or "" when it is fine, so that the caller can name the option or file it came from.
#pragma once

#include <string>
#include <string_view>

namespace harness {

// The longest identifier accepted (a commit, a branch, a machine's name).
inline constexpr size_t kMaxIdentifierLength = 256;

// Why `name` cannot name a git revision (a commit's sha, a tag, a branch), or "". Such a name is
// 1 to kMaxIdentifierLength bytes of letters, digits and . _ / + @ - alone, and does not begin
// with '-' (git would take it as an option) or '.'. Nothing of it can break a Markdown table,
// an HTML page or a terminal.
std::string revision_name_problem(std::string_view name);
inline constexpr std::string_view kRevisionNameRule =
    "(letters, digits and . _ / + @ - only, at most 256 bytes, not starting with '-' or '.')";

// Why `label` cannot be a free-form label (a machine's name), or "": 1 to kMaxIdentifierLength
// bytes, no control character, no '|' or '`' (Markdown), and no leading '-'.
std::string label_problem(std::string_view label);

// Why `text` is no ISO 8601 time, or "": a date (YYYY-MM-DD), or a date, 'T' or a blank, and
// HH:MM:SS with an optional fraction and an optional zone (Z, or +HH:MM as git's %cI writes it).
std::string iso8601_problem(std::string_view text);

}  // namespace harness
