// The local launcher with stand-in ranks (/bin/sh scripts): it must notice a rank that dies
// or hangs, stop the others, and name the rank with the tail of its stderr.
#include "harness/local_launcher.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "test_util.h"

namespace {

using harness::launch_local;
using harness::LaunchLimits;
using harness::RankProcess;
using harness_test::TempDir;

std::vector<RankProcess> shell_ranks(const TempDir& dir, const std::vector<std::string>& scripts) {
  std::vector<RankProcess> ranks;
  for (size_t r = 0; r < scripts.size(); ++r) {
    RankProcess rank;
    rank.arguments = {"-c", scripts[r]};
    rank.environment = {{"RANK", std::to_string(r)}};
    rank.stdout_path = dir.path() / ("rank" + std::to_string(r) + ".stdout");
    rank.stderr_path = dir.path() / ("rank" + std::to_string(r) + ".stderr");
    ranks.push_back(rank);
  }
  return ranks;
}

bool process_alive(const std::string& pid_file) {
  std::ifstream in(pid_file);
  int pid = 0;
  if (!(in >> pid)) return false;
  return kill(pid, 0) == 0;
}

TEST(LocalLauncher, AllRanksSucceed) {
  TempDir dir;
  const auto outcome = launch_local(
      "/bin/sh", shell_ranks(dir, {"echo rank $RANK", "echo rank $RANK"}), LaunchLimits{});
  EXPECT_TRUE(outcome.ok);
  EXPECT_FALSE(outcome.failure.has_value());
  std::ifstream out(dir.path() / "rank1.stdout");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "rank 1");  // the environment reached the rank
}

TEST(LocalLauncher, CrashedRankIsNamedAndTheOthersAreStopped) {
  TempDir dir;
  const std::string pid_file = (dir.path() / "survivor.pid").string();
  const auto outcome = launch_local(
      "/bin/sh",
      shell_ranks(dir, {"echo $$ > " + pid_file + "; exec sleep 60",
                        "sleep 0.3; echo 'loading shard' >&2; echo 'segfault here' >&2; "
                        "kill -SEGV $$"}),
      LaunchLimits{});
  EXPECT_FALSE(outcome.ok);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->rank, 1);
  EXPECT_EQ(outcome.failure->reason, "killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(outcome.failure->stderr_tail, "loading shard\nsegfault here\n");
  EXPECT_FALSE(process_alive(pid_file)) << "rank 0 was left running";
}

TEST(LocalLauncher, NonZeroExitIsAFailure) {
  TempDir dir;
  const auto outcome =
      launch_local("/bin/sh", shell_ranks(dir, {"exec sleep 60", "echo 'bad config' >&2; exit 3"}),
                   LaunchLimits{});
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->rank, 1);
  EXPECT_EQ(outcome.failure->reason, "exited with code 3");
  EXPECT_EQ(outcome.failure->stderr_tail, "bad config\n");
}

TEST(LocalLauncher, HungRankIsTheOneThatGotLeastFar) {
  TempDir dir;
  LaunchLimits limits;
  limits.stall_timeout_s = 1.0;
  // Rank 0 writes three heartbeats then waits (as if blocked in a collective); rank 1 writes
  // one and hangs.
  const auto outcome = launch_local(
      "/bin/sh",
      shell_ranks(dir, {"echo a; echo b; echo c; exec sleep 60", "echo a; exec sleep 60"}), limits);
  EXPECT_FALSE(outcome.ok);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->rank, 1);
  EXPECT_EQ(outcome.failure->reason.rfind("hung: no progress from any rank for 1 s", 0), 0u)
      << outcome.failure->reason;
  EXPECT_GE(outcome.elapsed_s, 1.0);
  EXPECT_LT(outcome.elapsed_s, 10.0);
}

TEST(LocalLauncher, OverallTimeout) {
  TempDir dir;
  LaunchLimits limits;
  limits.timeout_s = 0.5;
  // Keeps printing, so it never stalls, but runs past the timeout.
  const auto outcome = launch_local(
      "/bin/sh", shell_ranks(dir, {"while true; do echo x; sleep 0.05; done"}), limits);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->reason, "timed out: the run exceeded run.timeout_s = 0.5 s");
}

TEST(TailLines, KeepsTheLastLines) {
  TempDir dir;
  const auto file = dir.write("log", "1\n2\n3\n4\n");
  EXPECT_EQ(harness::tail_lines(file, 2), "3\n4\n");
  EXPECT_EQ(harness::tail_lines(dir.path() / "missing", 2), "");
}

TEST(FreePort, IsAUsablePortNumber) {
  const int port = harness::pick_free_port();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

}  // namespace
