// Small string helpers shared by the spec loader and the CLI.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// Edit distance (insertions, deletions, substitutions), for "did you mean" hints.
int edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is close enough to be a likely typo.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

std::vector<std::string> split(std::string_view text, char separator);

std::string join(const std::vector<std::string>& parts, std::string_view separator);

// `text` read as a number only when all of it is one after leading blanks ("1.5", "1e-3",
// "nan", "inf"; not "1.5x", "" or "1e999"); the caller decides whether nan and inf are
// acceptable.
std::optional<double> parse_whole_number(const std::string& text);

// Why `name` cannot name a folder the harness makes, or "" when it can. Such a name is not
// empty, at most kMaxNameLength bytes, has no '/', '\\', blank or control character (a
// newline or a NUL would break tables and paths), and does not start with '.'.
std::string folder_name_problem(std::string_view name);
inline constexpr std::string_view kFolderNameRule =
    "(a name has at most 128 bytes, no '/', blank or control character, and no leading '.')";

// Fixed-point formatting without trailing noise ("3", "2.5", "0.125").
std::string format_number(double value, int max_decimals = 6);

// Six significant digits, in exponent form where the number is large or small ("1e+308",
// "2.5", "1.25e-07"): a value from a file that may be anything, in an error message.
std::string format_general(double value);

// A relative change, signed, one decimal: "+3.1%".
std::string format_signed_percent(double pct);
// With its interval: "+3.1% [-1.2, +7.5]".
std::string format_change_with_interval(double pct, double low_pct, double high_pct);

// `text` with &, <, > and " as entities: safe inside HTML and SVG text and attribute values.
std::string markup_escaped(std::string_view text);

// `line` as a terminal may show it: each control character, C1 control and byte that is not
// UTF-8 as "\xNN" (so that no escape sequence reaches the terminal and a NUL cuts nothing short),
// and past `max_bytes` the rest as " ... (N more bytes)".
std::string terminal_safe(std::string_view line, size_t max_bytes = 2000);

// Fixed-point formatting with exactly `decimals` digits after the point ("2.50"), as tables
// print their columns.
std::string format_fixed(double value, int decimals);

}  // namespace harness
