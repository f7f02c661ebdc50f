// Checks on command-line numbers beyond CLI11's own: a value must be a number written whole
// and finite ("nan" and "inf" pass CLI11's range checks, since they compare false).
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

namespace harness {

// A finite number at least `minimum` (or above it, when `strict`).
inline CLI::Validator finite_number(double minimum, bool strict) {
  const std::string bound = std::string(strict ? "> " : ">= ") + CLI::detail::to_string(minimum);
  return CLI::Validator(
      [minimum, strict, bound](std::string& text) -> std::string {
        double value = 0;
        size_t used = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (used != text.size()) return "'" + text + "' is not a number";
        if (!std::isfinite(value) || (strict ? value <= minimum : value < minimum)) {
          return "must be a finite number " + bound + ", got '" + text + "'";
        }
        return "";
      },
      "NUMBER " + bound);
}

}  // namespace harness
