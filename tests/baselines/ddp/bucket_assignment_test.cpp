// Bucket assignment against worked examples. The ResNet-50 expectations were produced by
// PyTorch 1.13's own torch.distributed._compute_bucket_assignment_by_size on the same tensor
// sizes in gradient-ready (reverse) order with limits [1 MiB, cap], i.e. what DDP's Reducer
// uses after its first iteration.
#include "baselines/ddp/bucket_assignment.h"

#include <gtest/gtest.h>

#include <numeric>

namespace {

using baselines::assign_buckets;
using baselines::Bucket;
using baselines::BucketOrder;
using baselines::kMiB;
using baselines::TensorSlot;

// torchvision ResNet-50's 161 parameter tensors (float32) in registration order, written out
// from the architecture: conv1, bn1, 4 stages of Bottlenecks (3, 4, 6, 3), fc.
std::vector<TensorSlot> resnet50_parameters() {
  std::vector<TensorSlot> slots;
  auto add = [&](size_t elements) { slots.push_back({elements * 4, "Float"}); };
  auto conv = [&](size_t out, size_t in, size_t k) { add(out * in * k * k); };
  auto bn = [&](size_t c) { add(c), add(c); };
  conv(64, 3, 7);
  bn(64);
  size_t in = 64;
  const std::pair<size_t, size_t> stages[] = {{64, 3}, {128, 4}, {256, 6}, {512, 3}};
  for (auto [planes, blocks] : stages) {
    for (size_t b = 0; b < blocks; ++b) {
      conv(planes, in, 1), bn(planes);
      conv(planes, planes, 3), bn(planes);
      conv(planes * 4, planes, 1), bn(planes * 4);
      if (b == 0) conv(planes * 4, in, 1), bn(planes * 4);
      in = planes * 4;
    }
  }
  add(1000 * 2048);
  add(1000);
  return slots;
}

struct Expected {
  size_t first, last, count, bytes;
};

void expect_buckets(const std::vector<Bucket>& buckets, const std::vector<Expected>& expected) {
  ASSERT_EQ(buckets.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("bucket " + std::to_string(i));
    EXPECT_EQ(buckets[i].tensors.front(), expected[i].first);
    EXPECT_EQ(buckets[i].tensors.back(), expected[i].last);
    EXPECT_EQ(buckets[i].tensors.size(), expected[i].count);
    EXPECT_EQ(buckets[i].bytes, expected[i].bytes);
  }
}

TEST(BucketAssignment, ResNet50ParameterListMatchesTorchvision) {
  const auto slots = resnet50_parameters();
  ASSERT_EQ(slots.size(), 161u);
  size_t bytes = 0;
  for (const auto& s : slots) bytes += s.bytes;
  EXPECT_EQ(bytes, 25557032u * 4);
}

TEST(BucketAssignment, ResNet50At25MiBMatchesPyTorch) {
  const auto buckets = assign_buckets(resnet50_parameters(), BucketOrder::kReverse,
                                      baselines::ddp_size_limits(1, 25));
  // fc.bias + fc.weight overflow the 1 MiB first bucket; then 25 MiB buckets.
  expect_buckets(buckets, {{160, 159, 2, 8196000},
                           {158, 144, 15, 31502336},
                           {143, 132, 12, 26255360},
                           {131, 81, 51, 26550272},
                           {80, 0, 81, 9724160}});
  EXPECT_EQ(buckets[0].size_limit, 1 * kMiB);
  EXPECT_EQ(buckets[1].size_limit, 25 * kMiB);
  EXPECT_EQ(buckets[4].size_limit, 25 * kMiB);
}

TEST(BucketAssignment, ResNet50At1MiBMatchesPyTorch) {
  const auto buckets = assign_buckets(resnet50_parameters(), BucketOrder::kReverse,
                                      baselines::ddp_size_limits(1, 1));
  ASSERT_EQ(buckets.size(), 35u);
  // A sample of PyTorch's 35 buckets: the head, the middle and the tail.
  expect_buckets(
      {buckets[0], buckets[1], buckets[2], buckets[10], buckets[29], buckets[33], buckets[34]},
      {{160, 159, 2, 8196000},
       {158, 156, 3, 4210688},
       {155, 153, 3, 9441280},
       {131, 129, 3, 2101248},
       {74, 66, 9, 1383424},
       {38, 21, 18, 1072128},
       {20, 0, 21, 552192}});
  // Every tensor lands in exactly one bucket.
  std::vector<int> seen(161, 0);
  for (const auto& b : buckets) {
    for (size_t t : b.tensors) ++seen[t];
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 161);
}

TEST(BucketAssignment, ATensorLargerThanTheCapIsNeverSplit) {
  // 3 MiB tensor with a 1 MiB cap: alone in its bucket, which exceeds the limit.
  const std::vector<TensorSlot> slots = {{100, "Float"}, {3 * kMiB, "Float"}, {200, "Float"}};
  const auto buckets = assign_buckets(slots, BucketOrder::kForward, {kMiB});
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].tensors, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(buckets[0].bytes, 3 * kMiB + 100);
  EXPECT_EQ(buckets[1].tensors, (std::vector<size_t>{2}));
}

TEST(BucketAssignment, DtypesNeverShareABucket) {
  // Reverse order: 3 (Half), 2 (Float), 1 (Half), 0 (Float). Limit 300 bytes.
  const std::vector<TensorSlot> slots = {
      {200, "Float"}, {200, "Half"}, {200, "Float"}, {200, "Half"}};
  const auto buckets = assign_buckets(slots, BucketOrder::kReverse, {300});
  ASSERT_EQ(buckets.size(), 2u);
  // The Half bucket closes first (when tensor 1 arrives), then the Float one.
  EXPECT_EQ(buckets[0].dtype, "Half");
  EXPECT_EQ(buckets[0].tensors, (std::vector<size_t>{3, 1}));
  EXPECT_EQ(buckets[1].dtype, "Float");
  EXPECT_EQ(buckets[1].tensors, (std::vector<size_t>{2, 0}));
}

TEST(BucketAssignment, FirstLimitAppliesOncePerDtypeThenTheCap) {
  // Limits {100, 1000}: first bucket closes at >= 100 bytes, later ones at >= 1000.
  std::vector<TensorSlot> slots(10, TensorSlot{150, "Float"});
  const auto buckets = assign_buckets(slots, BucketOrder::kForward, {100, 1000});
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].tensors.size(), 1u);  // 150 >= 100
  EXPECT_EQ(buckets[1].tensors.size(), 7u);  // 7 * 150 = 1050 >= 1000
  EXPECT_EQ(buckets[2].tensors.size(), 2u);  // remainder, still open at the end
  EXPECT_EQ(buckets[2].size_limit, 1000u);
}

TEST(BucketAssignment, RejectsEmptyAndZeroLimits) {
  EXPECT_THROW(assign_buckets({{1, "Float"}}, BucketOrder::kForward, {}), std::invalid_argument);
  EXPECT_THROW(assign_buckets({{1, "Float"}}, BucketOrder::kForward, {0}), std::invalid_argument);
}

TEST(BucketAssignment, FractionalMegabyteCaps) {
  EXPECT_EQ(baselines::ddp_size_limits(1, 0.5), (std::vector<size_t>{kMiB, kMiB / 2}));
}

}  // namespace
