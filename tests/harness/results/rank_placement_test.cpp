// A run that says cuda must have trained on cuda: the placement each rank reports (read back
// from its parameters and communicator) is held against the spec; the first rank that differs,
// or that reported none, fails the run with a line naming both.
#include "harness/results/rank_placement.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/test_util.h"

namespace {

using harness_test::TempDir;

void report(TempDir& dir, const std::string& file, const std::string& device,
            const std::string& backend) {
  dir.write(file, R"({"parameter_bytes": 4, "placement": {"device": ")" + device +
                      R"(", "backend": ")" + backend + R"("}})");
}

TEST(RankPlacement, EveryRankOnTheAskedDeviceAndBackendPasses) {
  TempDir dir;
  report(dir, "memory_rank0.json", "cuda:0", "nccl");
  report(dir, "memory_rank1.json", "cuda:1", "nccl");
  EXPECT_FALSE(harness::check_rank_placements(dir.path(), 2, "cuda", "nccl"));
  TempDir cpu;
  report(cpu, "pipeline_rank0.json", "cpu", "gloo");  // pipeline ranks report in their file
  EXPECT_FALSE(harness::check_rank_placements(cpu.path(), 1, "cpu", "gloo"));
}

TEST(RankPlacement, ACpuRankUnderACudaSpecFailsTheRun) {
  TempDir dir;
  report(dir, "memory_rank0.json", "cuda:0", "nccl");
  report(dir, "memory_rank1.json", "cpu", "gloo");
  const auto wrong = harness::check_rank_placements(dir.path(), 2, "cuda", "nccl");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->rank, 1);
  EXPECT_EQ(wrong->reason, "trained on cpu over gloo, but the spec asked for cuda over nccl");
  // The backend alone differing is as wrong.
  report(dir, "memory_rank1.json", "cuda:1", "gloo");
  EXPECT_EQ(harness::check_rank_placements(dir.path(), 2, "cuda", "nccl")->reason,
            "trained on cuda:1 over gloo, but the spec asked for cuda over nccl");
  // cuda does not pass for cpu either.
  EXPECT_EQ(harness::check_rank_placements(dir.path(), 1, "cpu", "nccl")->rank, 0);
}

TEST(RankPlacement, ARankThatReportedNothingFailsTheRun) {
  TempDir dir;
  report(dir, "memory_rank0.json", "cpu", "gloo");
  dir.write("memory_rank1.json", R"({"parameter_bytes": 4})");
  dir.write("memory_rank2.json", "{not json");
  auto wrong = harness::check_rank_placements(dir.path(), 3, "cpu", "gloo");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->rank, 1);
  EXPECT_EQ(wrong->reason, "reported no device or backend (expected cpu over gloo)");
  report(dir, "memory_rank1.json", "cpu", "gloo");
  EXPECT_EQ(harness::check_rank_placements(dir.path(), 3, "cpu", "gloo")->rank, 2);
}

}  // namespace
