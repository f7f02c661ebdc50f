// Regular expressions (std::regex's ECMAScript grammar) compiled and matched in one file.
// std::regex's compiler and matcher are templates: every translation unit that used one paid
// ~3 s of compile at -O2 to instantiate and optimise them again. Here they are built once, and
// a pattern is a value that any file can hold and match without including <regex>.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness {

// A pattern that does not compile; what() is std::regex's reason.
class PatternError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// One match: group 0 is the whole match, group N the N-th capturing group.
class PatternMatch {
 public:
  PatternMatch(size_t position, size_t length, std::vector<std::optional<std::string>> groups)
      : position_(position), length_(length), groups_(std::move(groups)) {}

  // Offset of the whole match in the text that was searched, and its length.
  size_t position() const { return position_; }
  size_t length() const { return length_; }
  // Whether group `index` took part in the match (an optional group may not).
  bool matched(size_t index) const { return index < groups_.size() && groups_[index].has_value(); }
  // The text group `index` matched; "" when it took no part.
  std::string group(size_t index) const { return matched(index) ? *groups_[index] : std::string(); }

 private:
  size_t position_;
  size_t length_;
  std::vector<std::optional<std::string>> groups_;
};

class TextPattern {
 public:
  // Throws PatternError.
  explicit TextPattern(std::string_view pattern);

  // The first match anywhere in `text` (std::regex_search).
  std::optional<PatternMatch> search(std::string_view text) const;
  // A match of the whole of `text` (std::regex_match).
  std::optional<PatternMatch> match(std::string_view text) const;
  // Whether the whole of `text` matches, without taking its groups out.
  bool matches(std::string_view text) const;

 private:
  struct Compiled;
  // Shared: a compiled std::regex is only read when matching, so copies need not copy it.
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace harness
