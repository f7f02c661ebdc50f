// A run that says cuda must have trained on cuda, one that says bf16 in bf16: the placement each
// rank reports (read back from its parameters, communicator and forward pass) is held against
// the spec; the first rank that differs, or that reported none, fails the run with a line naming
// both.
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
  EXPECT_FALSE(harness::check_rank_placements(dir.path(), 2, "cuda", "nccl", "fp32"));
  TempDir cpu;
  report(cpu, "pipeline_rank0.json", "cpu", "gloo");  // pipeline ranks report in their file
  EXPECT_FALSE(harness::check_rank_placements(cpu.path(), 1, "cpu", "gloo", "fp32"));
}

TEST(RankPlacement, ACpuRankUnderACudaSpecFailsTheRun) {
  TempDir dir;
  report(dir, "memory_rank0.json", "cuda:0", "nccl");
  report(dir, "memory_rank1.json", "cpu", "gloo");
  const auto wrong = harness::check_rank_placements(dir.path(), 2, "cuda", "nccl", "fp32");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->rank, 1);
  EXPECT_EQ(wrong->reason, "trained on cpu over gloo, but the spec asked for cuda over nccl");
  // The backend alone differing is as wrong.
  report(dir, "memory_rank1.json", "cuda:1", "gloo");
  EXPECT_EQ(harness::check_rank_placements(dir.path(), 2, "cuda", "nccl", "fp32")->reason,
            "trained on cuda:1 over gloo, but the spec asked for cuda over nccl");
  // cuda does not pass for cpu either.
  EXPECT_EQ(harness::check_rank_placements(dir.path(), 1, "cpu", "nccl", "fp32")->rank, 0);
}

TEST(RankPlacement, ARankThatReportedNothingFailsTheRun) {
  TempDir dir;
  report(dir, "memory_rank0.json", "cpu", "gloo");
  dir.write("memory_rank1.json", R"({"parameter_bytes": 4})");
  dir.write("memory_rank2.json", "{not json");
  auto wrong = harness::check_rank_placements(dir.path(), 3, "cpu", "gloo", "fp32");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->rank, 1);
  EXPECT_EQ(wrong->reason, "reported no device or backend (expected cpu over gloo)");
  report(dir, "memory_rank1.json", "cpu", "gloo");
  EXPECT_EQ(harness::check_rank_placements(dir.path(), 3, "cpu", "gloo", "fp32")->rank, 2);
}

TEST(RankPlacement, ARankThatRanInAnotherPrecisionFailsTheRun) {
  TempDir dir;
  dir.write("memory_rank0.json",
            R"({"placement": {"device": "cuda:0", "backend": "nccl", "precision": "bf16"}})");
  dir.write("memory_rank1.json",
            R"({"placement": {"device": "cuda:0", "backend": "nccl", "precision": "fp32"}})");
  EXPECT_FALSE(harness::check_rank_placements(dir.path(), 1, "cuda", "nccl", "bf16"));
  const auto wrong = harness::check_rank_placements(dir.path(), 2, "cuda", "nccl", "bf16");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->rank, 1);
  EXPECT_EQ(wrong->reason, "trained in fp32, but model.precision is bf16");
  // LibTorch's own default on a GPU is neither fp32 nor tf32.
  dir.write("memory_rank1.json", R"({"placement": {"device": "cuda:0", "backend": "nccl", )"
                                 R"("precision": "fp32 with TF32 convolutions"}})");
  EXPECT_EQ(harness::check_rank_placements(dir.path(), 2, "cuda", "nccl", "fp32")->reason,
            "trained in bf16, but model.precision is fp32");
  EXPECT_EQ(harness::check_rank_placements(dir.path(), 2, "cuda", "nccl", "bf16")->reason,
            "trained in fp32 with TF32 convolutions, but model.precision is bf16");
}

}  // namespace
