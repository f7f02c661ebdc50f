// The checks on names that reach git, Markdown and the terminal, and the terminal's view of a
// message: each reason named, each boundary on both sides.
#include "common/identifier_checks.h"

#include <gtest/gtest.h>

#include <string>

#include "common/text_util.h"

namespace {

using harness::iso8601_problem;
using harness::kMaxIdentifierLength;
using harness::label_problem;
using harness::revision_name_problem;
using harness::terminal_safe;

TEST(RevisionName, GitNamesPassAndOptionsDoNot) {
  EXPECT_EQ(revision_name_problem("a8c6e27"), "");
  EXPECT_EQ(revision_name_problem("release/v1.2+rc_1@x"), "");
  EXPECT_EQ(revision_name_problem(std::string(kMaxIdentifierLength, 'f')), "");
  EXPECT_EQ(revision_name_problem(std::string(kMaxIdentifierLength + 1, 'f')),
            "longer than 256 bytes");
  EXPECT_EQ(revision_name_problem(""), "empty");
  EXPECT_EQ(revision_name_problem("--output=x"), "starts with '-'");
  EXPECT_EQ(revision_name_problem(".hidden"), "starts with '.'");
  EXPECT_EQ(revision_name_problem("a-b"), "");  // a '-' inside is a name's
  EXPECT_EQ(revision_name_problem("c1\nc2"), "has a control character");
  EXPECT_EQ(revision_name_problem(std::string("c1\0", 3)), "has a control character");
  EXPECT_EQ(revision_name_problem("a|b"), "has a '|'");
  EXPECT_EQ(revision_name_problem("a b"), "has a ' '");
  EXPECT_EQ(revision_name_problem("<script>"), "has a '<'");
}

TEST(Label, BlanksPassControlsAndTableBreakersDoNot) {
  EXPECT_EQ(label_problem("ci runner 3 (x86-64)"), "");
  EXPECT_EQ(label_problem("-x"), "starts with '-'");
  EXPECT_EQ(label_problem("a\x1b[31m"), "has a control character");
  EXPECT_EQ(label_problem("a\x7f"), "has a control character");
  EXPECT_EQ(label_problem("a|b"), "has a '|'");
  EXPECT_EQ(label_problem("a`b"), "has a '`'");
  EXPECT_EQ(label_problem(""), "empty");
}

TEST(Iso8601, GitsFormsPassOthersDoNot) {
  EXPECT_EQ(iso8601_problem("2026-12-06"), "");
  EXPECT_EQ(iso8601_problem("2026-12-06T04:53:12"), "");
  EXPECT_EQ(iso8601_problem("2026-12-06T04:53:12Z"), "");
  EXPECT_EQ(iso8601_problem("2026-12-06T04:53:12+01:00"), "");  // git's %cI
  EXPECT_EQ(iso8601_problem("2026-12-06 04:53:12.250-05:30"), "");
  const std::string refused = "not an ISO 8601 time (2026-12-06T04:53:12Z)";
  EXPECT_EQ(iso8601_problem("yesterday"), refused);
  EXPECT_EQ(iso8601_problem("2026-13-06"), refused);
  EXPECT_EQ(iso8601_problem("2026-12-06T24:00:00"), refused);
  EXPECT_EQ(iso8601_problem("2026-12-06T04:53"), refused);
  EXPECT_EQ(iso8601_problem("2026-12-06T04:53:12."), refused);
  EXPECT_EQ(iso8601_problem("2026-12-06T04:53:12+1"), refused);
  EXPECT_EQ(iso8601_problem("2026-12-06T04:53:12Z; rm"), refused);
  EXPECT_EQ(iso8601_problem(""), refused);
}

TEST(TerminalSafe, ControlsAndStrayBytesAreShownAsEscapes) {
  EXPECT_EQ(terminal_safe("plain: text"), "plain: text");
  EXPECT_EQ(terminal_safe("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(terminal_safe(std::string("a\0b", 3)), "a\\x00b");  // a NUL cuts nothing short
  EXPECT_EQ(terminal_safe("tab\there"), "tab\\x09here");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");  // UTF-8 stays
  EXPECT_EQ(terminal_safe("\xc2\x9b"), "\\xc2\\x9b");           // U+009B, the 8-bit CSI
  EXPECT_EQ(terminal_safe("\xff\xc3"), "\\xff\\xc3");           // not UTF-8; a sequence cut short
  EXPECT_EQ(terminal_safe("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");  // overlong '/'
  EXPECT_EQ(terminal_safe("\xf8\x80\x80\x80"), "\\xf8\\x80\\x80\\x80");  // no UTF-8 lead
}

TEST(TerminalSafe, ALongValueIsCutWithWhatWasLeftOut) {
  const std::string value(20'000'000, 'v');
  const std::string shown = terminal_safe("--x: " + value, 100);
  EXPECT_EQ(shown, "--x: " + std::string(95, 'v') + " ... (19999905 more bytes)");
}

}  // namespace
