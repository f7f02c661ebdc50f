#include "common/json_file.h"

#include <algorithm>
#include <string>

#include "common/atomic_file.h"
#include "common/input_error.h"

namespace harness {
namespace {

// nlohmann's message without its own "[json.exception...] parse error at line L, column C: ".
std::string parse_reason(const std::string& what) {
  const size_t column = what.find("column ");
  if (column != std::string::npos) {
    const size_t colon = what.find(": ", column);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  return what;
}

}  // namespace

nlohmann::json parse_json(std::string_view text) {
  return nlohmann::json::parse(text.data(), text.data() + text.size());
}

std::string json_text(const nlohmann::json& value, int indent) { return value.dump(indent); }

nlohmann::json read_json_file(const std::filesystem::path& path) {
  const std::optional<std::string> read = read_input_file(path);
  if (!read) throw InputError(path.string() + ": cannot read");
  const std::string& text = *read;
  try {
    return parse_json(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is one past the character the parser stopped on.
    const size_t at = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const long long line = 1 + std::count(text.begin(), text.begin() + at, '\n');
    const size_t line_start = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
    const long long column =
        static_cast<long long>(line_start == std::string::npos ? at + 1 : at - line_start);
    throw InputError(path.string() + ":" + std::to_string(line) + ":" + std::to_string(column) +
                     ": malformed JSON: " + parse_reason(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // A number past double's range (1e999): no position from the parser.
    const std::string what = e.what();
    const size_t bracket = what.find("] ");
    throw InputError(path.string() + ": malformed JSON: " +
                     (bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
}

}  // namespace harness
