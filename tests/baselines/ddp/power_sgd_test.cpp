// PowerSGD (issue 22) on real Gloo, 2 ranks, rank 1, against the algorithm written out by hand:
// a bucket of a 4 x 6 weight (compressed: 2 x 1 x (4 + 6) = 20 < 24) and a 6-element bias
// (all-reduced as it is). Step 1 compresses the rank average of a rank-2 sum, so it loses
// something; step 2, with zero gradients, must deliver what step 1 lost (error feedback).
#include "baselines/ddp/power_sgd.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "baselines/ddp/gradient_reducer.h"
#include "common/json_file.h"
#include "tests/runtime/gloo_ranks.h"

namespace baselines {
namespace {

constexpr int kWorld = 2;

// One rank-1 power step of the rank sum S from Q, as the hook computes it: P = S Q normalised,
// Q' = S^T P, average = P Q'^T / world. (Sum of M_r Q = S Q: the all-reduces are linear.)
struct PowerStep {
  at::Tensor average, q;
};
PowerStep power_step(const at::Tensor& sum, const at::Tensor& q) {
  at::Tensor p = sum.mm(q);
  p = p / (p.norm() + 1e-8);
  const at::Tensor next_q = sum.t().mm(p);
  return {p.mm(next_q.t()) / kWorld, next_q};
}

TEST(PowerSgd, TwoRanksRankOneByHandAndTheErrorFeedbackCarriesTheResidual) {
  // Rank gradients whose sum is 2 x (3 e1 f1^T + e2 f2^T): rank 2, so rank 1 loses the second.
  const at::Tensor e1 = torch::tensor({1.0f, 0.f, 0.f, 0.f}),
                   e2 = torch::tensor({0.0f, 1.f, 0.f, 0.f});
  const at::Tensor f1 = torch::tensor({1.0f, 1.f, 0.f, 0.f, 0.f, 0.f}) / std::sqrt(2.0f);
  const at::Tensor f2 = torch::tensor({0.0f, 0.f, 1.f, 0.f, 0.f, 0.f});
  const at::Tensor sum = 2 * (3 * torch::outer(e1, f1) + torch::outer(e2, f2));
  const at::Tensor d = torch::arange(24, torch::kFloat).view({4, 6}) / 10;
  const std::vector<at::Tensor> weight = {sum / 2 + d, sum / 2 - d};
  const std::vector<at::Tensor> bias = {torch::tensor({1.0f, 2.f, 3.f, 4.f, 5.f, 6.f}),
                                        torch::tensor({3.0f, 2.f, 1.f, 0.f, -1.f, -2.f})};

  std::vector<std::vector<at::Tensor>> step1(kWorld), step2(kWorld), errors1(kWorld);
  std::string buckets;
  const auto failures = runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& c) {
    at::Tensor w = torch::zeros({4, 6}).requires_grad_(true);
    at::Tensor b = torch::zeros({6}).requires_grad_(true);
    ReducerOptions options;
    options.mode = SyncMode::kSync;
    options.compression = GradientCompression::kPowerSgd;
    options.power_sgd = {.rank = 1, .warmup_steps = 0, .seed = 5};
    GradientReducer reducer({w, b}, {"w", "b"}, c, options);
    if (r == 0) buckets = reducer.buckets_json();
    w.mutable_grad() = weight[r].clone();
    b.mutable_grad() = bias[r].clone();
    reducer.finish_backward();
    step1[r] = {w.grad().clone(), b.grad().clone()};
    w.mutable_grad().zero_();
    b.mutable_grad().zero_();
    reducer.finish_backward();
    step2[r] = {w.grad().clone(), b.grad().clone()};
  });
  for (const auto& f : failures) ASSERT_EQ(f, "");

  // Q as the hook starts it: bucket 0 (seed + 1000 x 0), the weight's place in the bucket
  // (buckets list parameters in reverse registration order, as DDP's: the bias first).
  const auto listed = harness::parse_json(buckets);
  ASSERT_EQ(listed.size(), 1u);
  ASSERT_EQ(listed[0]["parameters"], nlohmann::json({"b", "w"}));
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(5 + 1);
  const at::Tensor q0 = at::randn({6, 1}, generator, at::kFloat);
  const PowerStep first = power_step(sum, q0);
  // What step 1 lost, summed over ranks: the residuals E_r = M_r - average add to S - 2 avg.
  const at::Tensor residual = sum - kWorld * first.average;
  ASSERT_GT(residual.norm().item<double>(), 0.5);          // rank 1 cannot hold a rank-2 sum
  const PowerStep second = power_step(residual, first.q);  // warm start: step 1's Q
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_TRUE(torch::allclose(step1[r][0], first.average, 1e-5, 1e-6)) << step1[r][0];
    EXPECT_TRUE(torch::allclose(step1[r][1], (bias[0] + bias[1]) / 2));
    EXPECT_TRUE(torch::allclose(step2[r][0], second.average, 1e-5, 1e-6))
        << step2[r][0] << " vs " << second.average;
    EXPECT_TRUE(torch::equal(step2[r][1], torch::zeros({6})));  // exact: nothing to carry
  }
  // Step 2 hands back part of what step 1 lost: without feedback it would be zero.
  EXPECT_GT(step2[0][0].norm().item<double>(), 0.1);
  // On the wire per step: the bias (6) and P, Q (4 + 6), 4 bytes each, against 30 x 4.
  EXPECT_EQ(listed[0]["bytes"], 120);
  EXPECT_EQ(listed[0]["wire_bytes"], 64);
  EXPECT_EQ(listed[0]["compression"], "powersgd");
}

TEST(PowerSgd, WarmUpStepsAreExactAverages) {
  std::vector<at::Tensor> reduced(kWorld);
  const auto failures = runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& c) {
    at::Tensor w = torch::zeros({8, 8}).requires_grad_(true);
    ReducerOptions options;
    options.mode = SyncMode::kSync;
    options.compression = GradientCompression::kPowerSgd;
    options.power_sgd = {.rank = 1, .warmup_steps = 1, .seed = 0};
    GradientReducer reducer({w}, {"w"}, c, options);
    w.mutable_grad() = torch::eye(8) * (r + 1);  // rank 8 sum: compression would lose much
    reducer.finish_backward();
    reduced[r] = w.grad().clone();
  });
  for (const auto& f : failures) ASSERT_EQ(f, "");
  for (int r = 0; r < kWorld; ++r) EXPECT_TRUE(torch::allclose(reduced[r], torch::eye(8) * 1.5));
}

TEST(PowerSgd, GramSchmidtAndWhatIsCompressed) {
  at::Tensor m = torch::tensor({{3.0f, 1.0f}, {4.0f, 2.0f}, {0.0f, 5.0f}});
  orthonormalize_columns(m);
  EXPECT_TRUE(torch::allclose(m.t().mm(m), torch::eye(2), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(m.select(1, 0), torch::tensor({0.6f, 0.8f, 0.0f}), 1e-6, 1e-7));
  // Compressed when 2 r (n + m) < n m, the first dimension by the rest: 4 x 4 (16 < 16: no),
  // 4 x 6 (20 < 24), 1-D (never), 2 x 3 x 4 = 2 x 12 (28 < 24: no), 6 x 2 x 5 = 6 x 10 (32 < 60).
  const PowerSgdBucket bucket({{4, 4}, {4, 6}, {24}, {2, 3, 4}, {6, 2, 5}}, {0, 16, 40, 64, 88},
                              {.rank = 1, .warmup_steps = 0, .seed = 0});
  const bool expected[] = {false, true, false, false, true};
  for (size_t i = 0; i < std::size(expected); ++i)
    EXPECT_EQ(bucket.compressed(i), expected[i]) << i;
  // 16 + (4 + 6) + 24 + 24 + (6 + 10) elements of 4 bytes.
  EXPECT_EQ(bucket.wire_bytes(4), (16 + 10 + 24 + 24 + 16) * 4);
}

}  // namespace
}  // namespace baselines
