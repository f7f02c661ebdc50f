#include "common/text_pattern.h"

#include <regex>

namespace harness {

struct TextPattern::Compiled {
  std::regex regex;
};

namespace {

PatternMatch to_match(const std::cmatch& found, const char* text) {
  std::vector<std::optional<std::string>> groups;
  for (const auto& group : found) {
    groups.push_back(group.matched ? std::optional<std::string>(group.str()) : std::nullopt);
  }
  return PatternMatch(static_cast<size_t>(found[0].first - text),
                      static_cast<size_t>(found[0].length()), std::move(groups));
}

}  // namespace

TextPattern::TextPattern(std::string_view pattern) {
  try {
    compiled_ = std::make_shared<const Compiled>(
        Compiled{std::regex(pattern.begin(), pattern.end(), std::regex::ECMAScript)});
  } catch (const std::regex_error& e) {
    throw PatternError(e.what());
  }
}

std::optional<PatternMatch> TextPattern::search(std::string_view text) const {
  std::cmatch found;
  if (!std::regex_search(text.data(), text.data() + text.size(), found, compiled_->regex)) {
    return std::nullopt;
  }
  return to_match(found, text.data());
}

std::optional<PatternMatch> TextPattern::match(std::string_view text) const {
  std::cmatch found;
  if (!std::regex_match(text.data(), text.data() + text.size(), found, compiled_->regex)) {
    return std::nullopt;
  }
  return to_match(found, text.data());
}

bool TextPattern::matches(std::string_view text) const {
  return std::regex_match(text.data(), text.data() + text.size(), compiled_->regex);
}

}  // namespace harness
