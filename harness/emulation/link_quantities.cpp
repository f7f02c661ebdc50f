#include "harness/emulation/link_quantities.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>
#include <vector>

namespace harness {
namespace {

// Splits "2.5gbit" into 2.5 and "gbit"; the number must be finite and non-negative.
std::pair<double, std::string> number_and_unit(const std::string& text, const char* what) {
  size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("'" + text + "' is not a " + what);
  }
  if (!std::isfinite(number) || number < 0 || text.find_first_of("eE") != std::string::npos) {
    throw std::invalid_argument("'" + text + "' is not a " + what);
  }
  return {number, text.substr(used)};
}

// Fixed-point (tc takes no exponent), at most 3 decimals, trailing zeros dropped.
std::string trimmed_number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  std::string out = text;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out;
}

}  // namespace

double parse_link_rate(const std::string& text) {
  const char* what = "rate like 100mbit or 1gbit (bit, kbit, mbit, gbit; or bps, kbps, mbps, gbps)";
  const auto [number, unit] = number_and_unit(text, what);
  static const std::vector<std::pair<std::string, double>> units = {
      {"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9},
      {"bps", 8}, {"kbps", 8e3}, {"mbps", 8e6}, {"gbps", 8e9}};
  for (const auto& [name, scale] : units) {
    if (unit != name) continue;
    const double rate = number * scale;
    if (rate < 8e3 || rate > 400e9) {
      throw std::invalid_argument("'" + text + "' is outside 8kbit..400gbit");
    }
    return rate;
  }
  throw std::invalid_argument("'" + text + "' is not a " + what);
}

double parse_link_delay(const std::string& text) {
  const auto [number, unit] = number_and_unit(text, "delay like 100us, 1ms or 0.5s");
  double seconds = 0;
  if (unit == "us") {
    seconds = number * 1e-6;
  } else if (unit == "ms") {
    seconds = number * 1e-3;
  } else if (unit == "s") {
    seconds = number;
  } else {
    throw std::invalid_argument("'" + text + "' is not a delay like 100us, 1ms or 0.5s");
  }
  if (seconds > 10) throw std::invalid_argument("'" + text + "' is more than 10s");
  return seconds;
}

double parse_link_loss(const std::string& text) {
  const auto [number, unit] = number_and_unit(text, "loss like 0.1%");
  if (!unit.empty() && unit != "%")
    throw std::invalid_argument("'" + text + "' is not a loss like 0.1%");
  if (number > 100) throw std::invalid_argument("'" + text + "' is more than 100%");
  return number;
}

std::string tc_rate(double bits_per_second) {
  return trimmed_number(bits_per_second / 1e3) + "kbit";
}

std::string tc_delay(double seconds) { return trimmed_number(seconds * 1e6) + "us"; }

std::string tc_loss(double percent) { return trimmed_number(percent) + "%"; }

}  // namespace harness
