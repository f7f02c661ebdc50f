// Timings scraped from output that cannot change, e.g. "iter time: (?<iteration_ms>[0-9.]+)".
#include <stdexcept>

#include "harness/external/timing_readers.h"

namespace harness {
namespace {

bool known_group(const std::string& name) {
  if (name == "iter") return true;
  for (const char* field : kTimingFields) {
    if (name == field) return true;
  }
  return false;
}

}  // namespace

NamedRegex compile_named_regex(const std::string& pattern) {
  // std::regex (ECMAScript) numbers groups but cannot name them: drop the names, keeping
  // track of which number each got. A group is capturing when its "(" is not escaped, not
  // inside a bracket expression and not followed by "?".
  std::vector<std::string> group_names;
  std::string plain;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      plain += c;
      if (i + 1 < pattern.size()) plain += pattern[++i];
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      plain += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      // "[]...]" and "[^]...]": a leading ']' is a literal member, not the end.
      plain += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') plain += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') plain += pattern[++i];
      continue;
    }
    if (c != '(') {
      plain += c;
      continue;
    }
    if (pattern.compare(i, 3, "(?<") == 0 && i + 3 < pattern.size() && pattern[i + 3] != '=' &&
        pattern[i + 3] != '!') {
      const size_t close = pattern.find('>', i + 3);
      if (close == std::string::npos) {
        throw std::invalid_argument("unterminated group name after '(?<'");
      }
      const std::string name = pattern.substr(i + 3, close - i - 3);
      if (!known_group(name)) {
        throw std::invalid_argument("unknown group name '" + name +
                                    "' (expected iter, forward_ms, backward_ms, step_ms or "
                                    "iteration_ms)");
      }
      for (const auto& seen : group_names) {
        if (seen == name) throw std::invalid_argument("group name '" + name + "' used twice");
      }
      group_names.push_back(name);
      plain += '(';
      i = close;
      continue;
    }
    if (pattern.compare(i, 4, "(?<=") == 0 || pattern.compare(i, 4, "(?<!") == 0) {
      throw std::invalid_argument("lookbehind '(?<=' / '(?<!' is not supported");
    }
    if (i + 1 >= pattern.size() || pattern[i + 1] != '?') group_names.emplace_back();
    plain += c;
  }
  bool any_timing = false;
  for (const auto& name : group_names) {
    any_timing = any_timing || (!name.empty() && name != "iter");
  }
  if (!any_timing) {
    throw std::invalid_argument("no named timing group (expected e.g. (?<iteration_ms>[0-9.]+))");
  }
  try {
    return NamedRegex{TextPattern(plain), std::move(group_names)};
  } catch (const PatternError& e) {
    throw std::invalid_argument("invalid regular expression: " + std::string(e.what()));
  }
}

TimingRead read_regex_timings(std::istream& in, const NamedRegex& pattern) {
  TimingRead read;
  std::string line;
  for (long long number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) read.last_line = line;
    const std::optional<PatternMatch> match = pattern.regex.search(line);
    if (!match) continue;
    TimingSample sample;
    sample.line = number;
    for (size_t g = 0; g < pattern.group_names.size(); ++g) {
      const std::string& name = pattern.group_names[g];
      if (name.empty() || !match->matched(g + 1)) continue;
      const std::string text = match->group(g + 1);
      size_t used = 0;
      double value = 0;
      try {
        value = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      const bool integer_needed = name == "iter";
      if (used != text.size() || text.empty() || value < 0 ||
          (integer_needed && text.find_first_not_of("0123456789") != std::string::npos)) {
        read.malformed =
            MalformedSample{number, line,
                            "group '" + name + "' captured '" + text + "', not " +
                                (integer_needed ? "a non-negative integer" : "a number >= 0")};
        return read;
      }
      if (integer_needed) {
        sample.iteration = static_cast<long long>(value);
      } else {
        sample.fields[name] = value;
      }
    }
    if (sample.fields.empty()) continue;  // only optional groups matched, none of them timing
    read.samples.push_back(std::move(sample));
  }
  return read;
}

}  // namespace harness
