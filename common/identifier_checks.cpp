#include "common/identifier_checks.h"

#include <cctype>

namespace harness {

namespace {

bool is_control(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

std::string length_problem(std::string_view name) {
  if (name.empty()) return "empty";
  if (name.size() > kMaxIdentifierLength) {
    return "longer than " + std::to_string(kMaxIdentifierLength) + " bytes";
  }
  if (name.front() == '-') return "starts with '-'";
  return "";
}

bool is_revision_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' ||
         c == '+' || c == '@' || c == '-';
}

// Reads `count` digits at `at` into `value`; false where they are not all digits.
bool digits(std::string_view text, size_t at, size_t count, int& value) {
  if (at + count > text.size()) return false;
  value = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    value = value * 10 + (text[i] - '0');
  }
  return true;
}

bool is_date(std::string_view text) {
  int year = 0, month = 0, day = 0;
  return text.size() >= 10 && digits(text, 0, 4, year) && text[4] == '-' &&
         digits(text, 5, 2, month) && text[7] == '-' && digits(text, 8, 2, day) && month >= 1 &&
         month <= 12 && day >= 1 && day <= 31;
}

// "HH:MM:SS" at `at`, then an optional fraction; returns where it ends, or npos.
size_t time_end(std::string_view text, size_t at) {
  int hour = 0, minute = 0, second = 0;
  if (!digits(text, at, 2, hour) || text.size() < at + 8 || text[at + 2] != ':' ||
      !digits(text, at + 3, 2, minute) || text[at + 5] != ':' || !digits(text, at + 6, 2, second) ||
      hour > 23 || minute > 59 || second > 60) {
    return std::string_view::npos;
  }
  size_t end = at + 8;
  if (end < text.size() && text[end] == '.') {
    const size_t first = ++end;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == first) return std::string_view::npos;
  }
  return end;
}

bool is_zone(std::string_view zone) {
  if (zone.empty() || zone == "Z") return true;
  int hours = 0, minutes = 0;
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && digits(zone, 1, 2, hours) &&
         zone[3] == ':' && digits(zone, 4, 2, minutes) && hours <= 23 && minutes <= 59;
}

}  // namespace

std::string revision_name_problem(std::string_view name) {
  if (std::string problem = length_problem(name); !problem.empty()) return problem;
  if (name.front() == '.') return "starts with '.'";
  for (const char c : name) {
    if (is_control(c)) return "has a control character";
    if (!is_revision_character(c)) return "has a '" + std::string(1, c) + "'";
  }
  return "";
}

std::string label_problem(std::string_view label) {
  if (std::string problem = length_problem(label); !problem.empty()) return problem;
  for (const char c : label) {
    if (is_control(c)) return "has a control character";
    if (c == '|' || c == '`') return "has a '" + std::string(1, c) + "'";
  }
  return "";
}

std::string iso8601_problem(std::string_view text) {
  constexpr const char* kForm = "not an ISO 8601 time (2026-12-06T04:53:12Z)";
  if (text.size() > 64 || !is_date(text)) return kForm;
  if (text.size() == 10) return "";
  if (text[10] != 'T' && text[10] != ' ') return kForm;
  const size_t end = time_end(text, 11);
  if (end == std::string_view::npos || !is_zone(text.substr(end))) return kForm;
  return "";
}

}  // namespace harness
