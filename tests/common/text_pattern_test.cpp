#include "common/text_pattern.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using harness::PatternError;
using harness::PatternMatch;
using harness::TextPattern;

TEST(TextPattern, SearchFindsTheFirstMatchWithItsPositionAndGroups) {
  const TextPattern tag(R"(\[([0-9]+),([0-9]+)\]<(stdout|stderr)>:)");
  const std::string text = "mpirun: [1,3]<stderr>:oops [1,4]<stdout>:";
  const std::optional<PatternMatch> found = tag.search(text);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->position(), 8u);
  EXPECT_EQ(found->length(), std::string("[1,3]<stderr>:").size());
  EXPECT_EQ(found->group(0), "[1,3]<stderr>:");
  EXPECT_EQ(found->group(1), "1");
  EXPECT_EQ(found->group(2), "3");
  EXPECT_EQ(found->group(3), "stderr");
  // Searching on from after the first match: positions are relative to the text given.
  const std::optional<PatternMatch> next = tag.search(std::string_view(text).substr(22));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->position(), 5u);
  EXPECT_EQ(next->group(2), "4");
  EXPECT_FALSE(tag.search("no tag here"));
}

TEST(TextPattern, MatchNeedsTheWholeTextSearchDoesNot) {
  const TextPattern rank_file(R"(trace_rank(\d+)\.json)");
  EXPECT_TRUE(rank_file.matches("trace_rank12.json"));
  EXPECT_EQ(rank_file.match("trace_rank12.json")->group(1), "12");
  EXPECT_FALSE(rank_file.matches("trace_rank12.json.tmp"));
  EXPECT_FALSE(rank_file.matches("old_trace_rank1.json"));
  ASSERT_TRUE(rank_file.search("old_trace_rank1.json"));
  EXPECT_EQ(rank_file.search("old_trace_rank1.json")->position(), 4u);
}

TEST(TextPattern, AGroupThatTookNoPartIsUnmatchedNotEmpty) {
  const TextPattern optional_iter(R"((?:iter (\d+) )?t=([0-9.]*))");
  const std::optional<PatternMatch> without = optional_iter.search("t=");
  ASSERT_TRUE(without);
  EXPECT_FALSE(without->matched(1));
  EXPECT_EQ(without->group(1), "");
  EXPECT_TRUE(without->matched(2));  // took part, matched the empty text
  EXPECT_EQ(without->group(2), "");
  EXPECT_FALSE(without->matched(3));  // no such group
  const std::optional<PatternMatch> with = optional_iter.search("iter 7 t=1.5");
  ASSERT_TRUE(with);
  EXPECT_EQ(with->group(1), "7");
  EXPECT_EQ(with->group(2), "1.5");
}

TEST(TextPattern, AnchorsAndMultiLineTextFollowEcmaScript) {
  // '^' is the start of the text searched (no multiline flag), '.' stops at a newline.
  const TextPattern label(R"(^ *([0-9]+): )");
  EXPECT_EQ(label.search("  3: hello")->group(1), "3");
  EXPECT_FALSE(label.search("x 3: hello"));
  const TextPattern exited(
      R"(Process name: \[\[[0-9]+,[0-9]+\],([0-9]+)\]\s*\n\s*Exit code:\s*([0-9]+))");
  const std::optional<PatternMatch> found =
      exited.search("Process name: [[4242,1],2]\n  Exit code:    9\n");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->group(1), "2");
  EXPECT_EQ(found->group(2), "9");
}

TEST(TextPattern, ABadPatternIsRefusedWithStdRegexsReason) {
  try {
    TextPattern broken("time: ([0-9.]+");
    FAIL() << "an unbalanced group compiled";
  } catch (const PatternError& e) {
    EXPECT_NE(std::string(e.what()).find("Mismatched '(' and ')'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TextPattern("[a-"), PatternError);
  EXPECT_THROW(TextPattern("a{2,1}"), PatternError);
}

TEST(TextPattern, CopiesMatchAlike) {
  const TextPattern original("b+");
  const TextPattern copy = original;
  EXPECT_EQ(copy.search("abbbc")->group(0), "bbb");
  EXPECT_EQ(original.search("abbbc")->position(), 1u);
}

}  // namespace
