#include "planner/search/batch_range.h"

#include <sstream>

#include "common/input_error.h"

namespace harness::planner {

std::vector<int> parse_batch_sizes(const std::string& text, const std::string& where) {
  auto bad = [&](const std::string& what) {
    return InputError(where + ": " + what + " in batch sizes '" + text +
                      "' (expected start:end:step or a comma-separated list)");
  };
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
      throw bad("'" + s + "' is not a positive integer");
    }
    const int value = std::stoi(s);
    if (value <= 0) throw bad("'" + s + "' is not a positive integer");
    return value;
  };
  std::vector<std::string> parts;
  const char separator = text.find(':') != std::string::npos ? ':' : ',';
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, separator)) parts.push_back(item);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  std::vector<int> sizes;
  if (separator == ':') {
    if (parts.size() != 3) throw bad("a range needs exactly start:end:step");
    const int start = number(parts[0]), end = number(parts[1]), step = number(parts[2]);
    if (end < start) throw bad("end below start");
    sizes.push_back(start);
    for (long long b = (static_cast<long long>(start) / step + 1) * step; b <= end; b += step) {
      sizes.push_back(static_cast<int>(b));
    }
  } else {
    for (const auto& p : parts) sizes.push_back(number(p));
  }
  if (sizes.empty()) throw bad("no batch size");
  return sizes;
}

}  // namespace harness::planner
