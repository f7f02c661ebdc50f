// Checks on command-line numbers beyond CLI11's own: a value must be a number written whole
// and finite ("nan" and "inf" pass CLI11's range checks, since they compare false).
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <optional>
#include <string>

#include "common/input_error.h"
#include "common/text_util.h"

namespace harness {

// A finite number at least `minimum` (or above it, when `strict`).
inline CLI::Validator finite_number(double minimum, bool strict) {
  const std::string bound = std::string(strict ? "> " : ">= ") + CLI::detail::to_string(minimum);
  return CLI::Validator(
      [minimum, strict, bound](std::string& text) -> std::string {
        const std::optional<double> parsed = parse_whole_number(text);
        if (!parsed) return "'" + text + "' is not a number";
        const double value = *parsed;
        if (!std::isfinite(value) || (strict ? value <= minimum : value < minimum)) {
          return "must be a finite number " + bound + ", got '" + text + "'";
        }
        return "";
      },
      "NUMBER " + bound);
}

// A value given at all must say something: an empty one would quietly stand for the default.
inline CLI::Validator not_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "empty (leave the option out for its default)" : "";
      },
      "");
}

// A noise study's percentage (`harness plan --noise-compute`, `harness spmd --noise-flops`) as a
// fraction: InputError "COMMAND: OPTION must be a percentage in [0, 100)" outside that range.
inline double percent_as_fraction(double percent, const std::string& command,
                                  const std::string& option) {
  if (!(percent >= 0.0 && percent < 100.0)) {
    throw InputError(command + ": " + option + " must be a percentage in [0, 100)");
  }
  return percent / 100.0;
}

}  // namespace harness
