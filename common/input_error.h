// Errors in user input (spec files, --set overrides, profiles) carry their location so the
// CLI can print one line "file:line:column: message" and exit with code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace harness {

// Thrown for bad user input. what() is the complete one-line message, location included.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// "file:line:column" with 1-based line and column (yaml-cpp marks are 0-based).
inline std::string format_location(const std::string& file, int line0, int column0) {
  return file + ":" + std::to_string(line0 + 1) + ":" + std::to_string(column0 + 1);
}

}  // namespace harness
