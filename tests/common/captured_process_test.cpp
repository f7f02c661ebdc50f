#include "common/captured_process.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/test_util.h"

namespace {

TEST(FindOnPath, TheFirstExecutableFileOfThatNameAsAShellFindsIt) {
  harness_test::TempDir dir;
  const auto first = dir.path() / "first";
  const auto second = dir.path() / "second";
  std::filesystem::create_directories(first / "tool-dir");
  std::filesystem::create_directories(second);
  for (const auto& file : {first / "data", second / "data", second / "tool", first / "tool"}) {
    std::ofstream(file) << "#!/bin/sh\n";
  }
  ::chmod((first / "data").c_str(), 0644);  // not executable: passed over
  ::chmod((second / "data").c_str(), 0755);
  ::chmod((second / "tool").c_str(), 0755);
  ::chmod((first / "tool").c_str(), 0644);
  const harness_test::ScopedEnv path("PATH",
                                     "/no/such/folder:" + first.string() + ":" + second.string());
  EXPECT_EQ(harness::find_on_path("data"), (second / "data").string());
  EXPECT_EQ(harness::find_on_path("tool"), (second / "tool").string());
  EXPECT_EQ(harness::find_on_path("tool-dir"), "");  // a folder is no program
  EXPECT_EQ(harness::find_on_path("missing"), "");
}

TEST(FindOnPath, NothingIsFoundWithoutAPath) {
  const harness_test::ScopedEnv path("PATH", "/no/such/folder");
  EXPECT_EQ(harness::find_on_path("sh"), "");
}

TEST(FirstLineSaid, StandardErrorsFirstLineElseStandardOutputs) {
  const harness::CapturedOutput both = harness::run_captured(
      "sh", {"-c", "echo out; echo 'Cannot find device \"eth9\"' >&2; echo more >&2; exit 1"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(harness::first_line_said(both), "Cannot find device \"eth9\"");
  const harness::CapturedOutput out_only =
      harness::run_captured("sh", {"-c", "echo usage: tool; echo second; exit 2"});
  EXPECT_EQ(harness::first_line_said(out_only), "usage: tool");
  EXPECT_EQ(harness::first_line_said(harness::run_captured("true", {})), "");
}

}  // namespace
