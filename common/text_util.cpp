#include "common/text_util.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "common/limits.h"

namespace harness {

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_distance = 0;
  for (const auto& candidate : candidates) {
    const int distance = edit_distance(word, candidate);
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // A typo changes a few characters; beyond a third of the word it is another word.
  const int allowed = std::max<int>(2, static_cast<int>(word.size()) / 3);
  return best_distance <= allowed ? best : std::string();
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

std::optional<double> parse_whole_number(const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string format_number(double value, int max_decimals) {
  std::string text = format_fixed(value, max_decimals);
  if (text.find('.') != std::string::npos) {
    while (!text.empty() && text.back() == '0') text.pop_back();
    if (!text.empty() && text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

std::string format_general(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

std::string format_signed_percent(double pct) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", pct);
  return buffer;
}

std::string format_change_with_interval(double pct, double low_pct, double high_pct) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%+.1f%% [%+.1f, %+.1f]", pct, low_pct, high_pct);
  return buffer;
}

std::string markup_escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// The length of the UTF-8 sequence of a printable character at `text[at]`, or 0 where the byte
// starts none (a stray continuation byte, a truncated or overlong sequence, a C1 control).
size_t printable_utf8_length(std::string_view text, size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead >= 0x20 && lead < 0x7f) return 1;
  size_t length = 0;
  if (lead >= 0xc2 && lead < 0xe0) length = 2;
  if (lead >= 0xe0 && lead < 0xf0) length = 3;
  if (lead >= 0xf0 && lead < 0xf5) length = 4;
  if (length == 0 || at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(text[at + i]) & 0xc0) != 0x80) return 0;
  }
  const auto second = static_cast<unsigned char>(text[at + 1]);
  if (lead == 0xc2 && second < 0xa0) return 0;   // U+0080..U+009F: C1 controls
  if (lead == 0xe0 && second < 0xa0) return 0;   // overlong
  if (lead == 0xf0 && second < 0x90) return 0;   // overlong
  if (lead == 0xf4 && second >= 0x90) return 0;  // past U+10FFFF
  if (lead == 0xed && second >= 0xa0) return 0;  // surrogates
  return length;
}

}  // namespace

std::string terminal_safe(std::string_view line, size_t max_bytes) {
  std::string out;
  size_t at = 0;
  while (at < line.size() && out.size() < max_bytes) {
    if (const size_t length = printable_utf8_length(line, at); length > 0) {
      out.append(line.substr(at, length));
      at += length;
      continue;
    }
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(line[at++]));
    out += escaped;
  }
  if (at < line.size()) out += " ... (" + std::to_string(line.size() - at) + " more bytes)";
  return out;
}

static_assert(kMaxNameLength == 128, "kFolderNameRule states the limit");

std::string folder_name_problem(std::string_view name) {
  if (name.empty()) return "empty";
  if (name.size() > kMaxNameLength) {
    return "longer than " + std::to_string(kMaxNameLength) + " bytes";
  }
  if (name.front() == '.') return "starts with '.'";
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\') return "has a '" + std::string(1, c) + "'";
    if (c == ' ' || c == '\t') return "has a blank";
    if (byte < 0x20 || byte == 0x7f) return "has a control character";
  }
  return "";
}

}  // namespace harness
