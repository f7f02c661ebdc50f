// Errors in user input (spec files, --set overrides, profiles) carry their location so the
// CLI can print one line "file:line:column: message" and exit with code 2.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace harness {

// A 1-based line and column in an input file.
struct SourcePosition {
  int line = 0;
  int column = 0;
  friend auto operator<=>(const SourcePosition&, const SourcePosition&) = default;
};

// Thrown for bad user input. what() is the complete message, location included: one line,
// or one line per error where several were found at once (see harness/spec/spec_errors.h).
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message,
                      std::optional<SourcePosition> position = std::nullopt)
      : std::runtime_error(message), position_(position) {}

  // Where in its file the error is, when it is in a file (not on the command line); errors
  // found together are reported in this order.
  const std::optional<SourcePosition>& position() const { return position_; }

 private:
  std::optional<SourcePosition> position_;
};

// "file:line:column" with 1-based line and column (yaml-cpp marks are 0-based).
inline std::string format_location(const std::string& file, int line0, int column0) {
  return file + ":" + std::to_string(line0 + 1) + ":" + std::to_string(column0 + 1);
}

}  // namespace harness
