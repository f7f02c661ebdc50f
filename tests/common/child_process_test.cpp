#include "common/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using harness::ChildExit;
using harness::ChildProcess;
using harness::ChildSpec;
using harness::ChildStream;

ChildSpec shell(const std::string& script) {
  ChildSpec spec;
  spec.program = "sh";
  spec.args = {"-c", script};
  return spec;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Whether `pid` is a process that has not ended (a zombie has).
bool alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto state_at = line.rfind(')');
  return state_at != std::string::npos && line.size() > state_at + 2 && line[state_at + 2] != 'Z' &&
         line[state_at + 2] != 'X';
}

// How many processes of process group `group` have not ended (/proc's fifth field).
int live_in_group(int group) {
  int live = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string state;
    int parent = 0, pgrp = 0;
    fields >> state >> parent >> pgrp;
    live += pgrp == group && state != "Z" && state != "X";
  }
  return live;
}

// Waits up to `seconds` for `pid` to be gone.
bool gone_within(int pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (alive(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The first line of `path` once it has one (a child's announcement), waiting up to 10 s.
std::string first_line_of(const fs::path& path) {
  for (int i = 0; i < 1000; ++i) {
    const std::string text = read_text(path);
    if (text.find('\n') != std::string::npos) return text.substr(0, text.find('\n'));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

TEST(ChildProcess, AProgramThatCannotStartEndsWith127AndSaysWhy) {
  harness_test::TempDir dir;
  ChildSpec spec;
  spec.program = (dir.path() / "no-such-program").string();
  spec.err = ChildStream::to_file(dir.path() / "err.txt");
  ChildProcess child(spec);
  EXPECT_EQ(child.pid(), -1);
  const ChildExit exit = child.wait();
  EXPECT_EQ(exit.code, 127);
  EXPECT_EQ(exit.signal, 0);
  EXPECT_EQ(read_text(dir.path() / "err.txt"),
            "cannot start " + spec.program + ": No such file or directory\n");
  // Not on PATH: the same, through the capture.
  const harness::CapturedOutput captured = harness::run_captured("no-such-program-here", {});
  EXPECT_EQ(captured.exit_code, 127);
  EXPECT_EQ(captured.err, "cannot start no-such-program-here: No such file or directory\n");
}

TEST(ChildProcess, ACrashIsItsSignalAndAnExitItsCode) {
  ChildProcess crashed(shell("kill -SEGV $$"));
  const ChildExit crash = crashed.wait();
  EXPECT_EQ(crash.signal, SIGSEGV);
  EXPECT_EQ(crash.code, 128 + SIGSEGV);
  EXPECT_EQ(crash.describe(), "killed by signal 11 (Segmentation fault)");
  ChildProcess exited(shell("exit 3"));
  EXPECT_EQ(exited.wait().describe(), "exited with code 3");
  EXPECT_TRUE(ChildProcess(shell("true")).wait().succeeded());
}

// SIGTERM ignored: stopped with SIGKILL once the grace period is over, its group with it.
TEST(ChildProcess, OneThatHangsIsStoppedAfterTheGracePeriodWithNothingLeft) {
  harness_test::TempDir dir;
  ChildSpec spec = shell("trap '' TERM; sleep 300 & echo $!; wait");
  spec.out = ChildStream::to_file(dir.path() / "out.txt");
  spec.own_process_group = true;
  ChildProcess child(spec);
  const int grandchild = std::stoi(first_line_of(dir.path() / "out.txt"));
  EXPECT_FALSE(child.wait_for(0.2));  // still running
  const auto asked = std::chrono::steady_clock::now();
  const ChildExit exit = child.stop(0.5);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_GE(took, 0.5);
  EXPECT_LT(took, 5.0);
  EXPECT_TRUE(gone_within(grandchild, 1.0));  // the group's other process too
  EXPECT_EQ(live_in_group(child.pid()), 0);   // no process of the group is left
}

TEST(ChildProcess, EnvironmentOverThisOnesAndItsOwnFolder) {
  harness_test::TempDir dir;
  const harness_test::ScopedEnv base("HARNESS_TEST_BASE", "from-parent");
  ChildSpec spec = shell("echo \"$HARNESS_TEST_BASE $HARNESS_TEST_OWN $(pwd)\"");
  spec.environment = {{"HARNESS_TEST_OWN", "own"}};
  spec.working_directory = dir.path();
  spec.out = ChildStream::to_file(dir.path() / "out.txt");
  ASSERT_TRUE(ChildProcess(spec).wait().succeeded());
  EXPECT_EQ(read_text(dir.path() / "out.txt"),
            "from-parent own " + fs::canonical(dir.path()).string() + "\n");
}

// Megabytes on both streams at once: read together, neither pipe stalls the child.
TEST(ChildProcess, MegabytesOnBothStreamsDoNotDeadlock) {
  const harness::CapturedOutput both = harness::run_captured(
      "sh",
      {"-c", "head -c 3000000 /dev/zero | tr '\\0' o; head -c 5000000 /dev/zero | tr '\\0' e >&2"});
  EXPECT_EQ(both.exit_code, 0);
  EXPECT_EQ(both.out.size(), 3000000u);
  EXPECT_EQ(both.err.size(), 5000000u);
  EXPECT_EQ(both.out.find_first_not_of('o'), std::string::npos);
}

// The helper of the next test, run as a process of its own: it starts a child through the layer,
// says its pid and waits to be killed.
TEST(ChildProcessHelper, StartsAChildAndWaits) {
  const char* out = std::getenv("HARNESS_CHILD_PROCESS_HELPER");
  if (out == nullptr) GTEST_SKIP() << "run by ChildProcess.SigkillOfTheParentLeavesNoChild";
  // Its own child, not a shell's: the layer ties the processes it starts to their parent, and
  // a shell's own children are the shell's.
  ChildSpec spec;
  spec.program = "sleep";
  spec.args = {"300"};
  spec.err = ChildStream::null();  // whatever happens, nothing holds the test's output open
  ChildProcess child(spec);
  std::ofstream(out) << child.pid() << "\n";
  std::this_thread::sleep_for(std::chrono::seconds(60));
}

TEST(ChildProcess, SigkillOfTheParentLeavesNoChild) {
  harness_test::TempDir dir;
  const fs::path said = dir.path() / "pid.txt";
  ChildSpec spec;
  spec.program = fs::read_symlink("/proc/self/exe").string();
  spec.args = {"--gtest_filter=ChildProcessHelper.StartsAChildAndWaits"};
  spec.environment = {{"HARNESS_CHILD_PROCESS_HELPER", said.string()}};
  spec.out = ChildStream::null();
  spec.err = ChildStream::null();
  ChildProcess helper(spec);
  const std::string line = first_line_of(said);
  ASSERT_FALSE(line.empty()) << "the helper said no pid";
  const int grandchild = std::stoi(line);
  ASSERT_TRUE(alive(grandchild));
  EXPECT_EQ(helper.kill().signal, SIGKILL);
  EXPECT_TRUE(gone_within(grandchild, 1.0));
}

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
