// Every synchronisation mode, at several bucket sizes, over real Gloo between two ranks (two
// threads sharing a c10d HashStore): after backward and one SGD step, each rank's gradients
// and parameters equal single-process training on the concatenated batch (relative 1e-5).
#include "baselines/ddp/gradient_reducer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <thread>

#include "runtime/comm/communicator.h"
#include "runtime/models/model_zoo.h"
#include "tests/runtime/gloo_ranks.h"

namespace {

using baselines::GradientReducer;
using baselines::ReducerOptions;
using baselines::SyncMode;

constexpr int kReducerWorld = 2;
constexpr int64_t kBatchPerRank = 6;
constexpr double kReducerLr = 0.1;

struct ReducerCase {
  SyncMode mode;
  double bucket_mb;
};

std::string case_name(const testing::TestParamInfo<ReducerCase>& info) {
  std::string name = baselines::to_string(info.param.mode) + "_" +
                     std::to_string(static_cast<long>(info.param.bucket_mb * 1024 * 1024)) +
                     "_bytes";
  return name;
}

class ReducerEquivalence : public testing::TestWithParam<ReducerCase> {};

std::shared_ptr<runtime::ZooModel> clone_of(const std::shared_ptr<runtime::ZooModel>& source) {
  auto copy = runtime::make_model("mlp", {{64}, 4});
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < source->parameters().size(); ++i) {
    copy->parameters()[i].copy_(source->parameters()[i]);
  }
  return copy;
}

TEST_P(ReducerEquivalence, MatchesSingleProcessTrainingOnTheWholeBatch) {
  const ReducerCase c = GetParam();
  torch::manual_seed(1234);
  auto reference = runtime::make_model("mlp", {{64}, 4});
  const torch::Tensor input = torch::randn({kReducerWorld * kBatchPerRank, 64});
  const torch::Tensor target = torch::randn({kReducerWorld * kBatchPerRank, 4});
  std::vector<std::shared_ptr<runtime::ZooModel>> models;
  for (int r = 0; r < kReducerWorld; ++r) models.push_back(clone_of(reference));

  // Single process, two iterations on the whole batch.
  std::vector<std::vector<torch::Tensor>> expected_grads;
  {
    torch::optim::SGD sgd(reference->parameters(), torch::optim::SGDOptions(kReducerLr));
    for (int it = 0; it < 2; ++it) {
      sgd.zero_grad();
      torch::mse_loss(reference->forward(input), target).backward();
      std::vector<torch::Tensor> grads;
      for (auto& p : reference->parameters()) grads.push_back(p.grad().clone());
      expected_grads.push_back(grads);
      sgd.step();
    }
  }

  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::vector<std::vector<torch::Tensor>>> rank_grads(kReducerWorld);
  std::vector<std::string> errors(kReducerWorld);
  std::vector<size_t> bucket_counts(kReducerWorld);
  std::vector<std::thread> threads;
  for (int r = 0; r < kReducerWorld; ++r) {
    threads.emplace_back([&, r]() {
      try {
        auto communicator =
            runtime::make_gloo_communicator(store, r, kReducerWorld, std::chrono::seconds(60));
        auto& model = models[r];
        std::vector<at::Tensor> parameters;
        std::vector<std::string> names;
        for (const auto& item : model->named_parameters()) {
          names.push_back(item.key());
          parameters.push_back(item.value());
        }
        ReducerOptions options;
        options.mode = c.mode;
        options.bucket_mb = c.bucket_mb;
        options.first_bucket_mb = std::min(1.0, c.bucket_mb);
        GradientReducer reducer(parameters, names, *communicator, options);
        bucket_counts[r] = reducer.buckets().size();
        torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(kReducerLr));
        const auto shard = torch::indexing::Slice(r * kBatchPerRank, (r + 1) * kBatchPerRank);
        for (int it = 0; it < 2; ++it) {
          sgd.zero_grad();
          torch::mse_loss(model->forward(input.index({shard})), target.index({shard})).backward();
          reducer.finish_backward();
          std::vector<torch::Tensor> grads;
          for (auto& p : model->parameters()) grads.push_back(p.grad().clone());
          rank_grads[r].push_back(grads);
          sgd.step();
        }
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kReducerWorld; ++r) ASSERT_EQ(errors[r], "") << "rank " << r;

  if (c.bucket_mb < 0.01) {
    // 1048-byte cap. Reverse order: {fc3.b, fc3.w}, {fc2.b, fc2.w}, {fc1.b, fc1.w}. Forward
    // order: {fc1.w}, {fc1.b, fc2.w}, {fc2.b, fc3.w}, {fc3.b}.
    EXPECT_EQ(bucket_counts[0], c.mode == SyncMode::kAsync ? 4u : 3u);
  } else if (c.bucket_mb >= 25) {
    EXPECT_EQ(bucket_counts[0], c.mode == SyncMode::kPerTensor ? 0u : 1u);
  }
  for (int r = 0; r < kReducerWorld; ++r) {
    for (int it = 0; it < 2; ++it) {
      for (size_t p = 0; p < expected_grads[it].size(); ++p) {
        EXPECT_TRUE(torch::allclose(rank_grads[r][it][p], expected_grads[it][p], 1e-5, 1e-7))
            << "rank " << r << " iteration " << it << " parameter " << p << " max diff "
            << (rank_grads[r][it][p] - expected_grads[it][p]).abs().max().item<double>();
      }
    }
    for (size_t p = 0; p < reference->parameters().size(); ++p) {
      EXPECT_TRUE(
          torch::allclose(models[r]->parameters()[p], reference->parameters()[p], 1e-5, 1e-7))
          << "rank " << r << " parameter " << p << " after two steps";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllModes, ReducerEquivalence,
    testing::Values(ReducerCase{SyncMode::kOverlap, 0.001}, ReducerCase{SyncMode::kOverlap, 0.1},
                    ReducerCase{SyncMode::kOverlap, 25}, ReducerCase{SyncMode::kSync, 0.001},
                    ReducerCase{SyncMode::kSync, 0.1}, ReducerCase{SyncMode::kSync, 25},
                    ReducerCase{SyncMode::kAsync, 0.001}, ReducerCase{SyncMode::kAsync, 0.1},
                    ReducerCase{SyncMode::kAsync, 25}, ReducerCase{SyncMode::kPerTensor, 25}),
    case_name);

TEST(SyncModeNames, RoundTrip) {
  for (const char* name : {"overlap", "sync", "async", "per_tensor"}) {
    EXPECT_EQ(baselines::to_string(baselines::parse_sync_mode(name)), name);
  }
  EXPECT_THROW(baselines::parse_sync_mode("ring"), std::invalid_argument);
}

}  // namespace

namespace {

// Compressed buckets (PyTorch's fp16/bf16 hooks): each rank's gradient cast to half precision
// and divided by the world size there, summed in it across the 2 ranks, cast back. The result
// is the rank average of the rounded gradients, rounded as half-precision arithmetic rounds
// it -- computed here with the same casts and one half-precision addition (a sum of two
// halves is exact in float, so Gloo's float accumulation rounds it once, as at::add does).
TEST(GradientCompression, BucketsCarryTheRankAverageOfTheRoundedGradients) {
  for (const auto compression :
       {baselines::GradientCompression::kFp16, baselines::GradientCompression::kBf16}) {
    SCOPED_TRACE(baselines::to_string(compression));
    const auto half =
        compression == baselines::GradientCompression::kFp16 ? at::kHalf : at::kBFloat16;
    // Two parameters (one bucket each at 1e-6 MiB); values that half precision cannot hold.
    const std::vector<std::vector<at::Tensor>> grads = {
        {torch::tensor({0.1f, 1.0f / 3, 1000.7f, -2.2e-3f}), torch::tensor({7.77f, -0.3f})},
        {torch::tensor({0.2f, 2.0f / 3, 0.05f, 4.4e-3f}), torch::tensor({1.11f, 0.9f})}};
    std::vector<std::vector<at::Tensor>> reduced(kReducerWorld);
    const auto errors =
        runtime_test::on_every_rank(kReducerWorld, [&](int r, runtime::Communicator& communicator) {
          std::vector<at::Tensor> parameters;
          for (const auto& g : grads[r]) {
            at::Tensor p = torch::zeros_like(g).requires_grad_(true);
            p.mutable_grad() = g.clone();
            parameters.push_back(p);
          }
          ReducerOptions options;
          options.mode = SyncMode::kSync;
          options.bucket_mb = 1e-6;  // one parameter per bucket
          options.first_bucket_mb = 1e-6;
          options.compression = compression;
          GradientReducer reducer(parameters, {"a", "b"}, communicator, options);
          reducer.finish_backward();
          for (const auto& p : parameters) reduced[r].push_back(p.grad().clone());
        });
    for (const auto& e : errors) ASSERT_EQ(e, "");
    for (size_t i = 0; i < grads[0].size(); ++i) {
      const at::Tensor expected =
          (grads[0][i].to(half).div(kReducerWorld) + grads[1][i].to(half).div(kReducerWorld))
              .to(at::kFloat);
      for (int r = 0; r < kReducerWorld; ++r) {
        EXPECT_TRUE(torch::equal(reduced[r][i], expected))
            << "rank " << r << " parameter " << i << ": " << reduced[r][i] << " vs " << expected;
      }
      // Rounded: not the float average.
      EXPECT_FALSE(torch::equal(expected, (grads[0][i] + grads[1][i]) / kReducerWorld));
    }
  }
}

TEST(GradientCompression, Names) {
  EXPECT_EQ(baselines::parse_gradient_compression("bf16"), baselines::GradientCompression::kBf16);
  EXPECT_STREQ(baselines::to_string(baselines::GradientCompression::kFp16), "fp16");
  try {
    baselines::parse_gradient_compression("int8");
    FAIL() << "int8 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "unknown gradient compression 'int8' (expected none, fp16, bf16 or powersgd)");
  }
}

}  // namespace
