// Expert parallelism on real Gloo (issue 22): ranks that each hold experts/world experts,
// route their own batch and send tokens to their experts and back by all-to-all, after one
// step hold what one process training the same model on the global batch holds (loss and
// every parameter, float64, rtol 1e-5), with and without tokens dropped for capacity. The
// single process routes the global batch in `world` groups, each with its own capacity: what
// ranks routing their own batches amount to (GShard's groups).
#include "baselines/moe/expert_parallel_sync.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "runtime/models/model_zoo.h"
#include "runtime/models/moe.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/gloo_ranks.h"

namespace baselines {
namespace {

using runtime::ModelOptions;

constexpr int64_t kSequence = 6, kPerRank = 3, kClasses = 3;
constexpr double kLoadBalanceWeight = 0.01, kLearningRate = 0.5;

// bert_moe reads kSequence tokens; vit_moe a 32 x 32 image, 4 patches and its class token.
ModelOptions options_for(double capacity_factor, int64_t groups, int64_t shard, int64_t shards,
                         const std::string& model = "bert_moe") {
  ModelOptions options;
  options.input_shape =
      model == "vit_moe" ? std::vector<int64_t>{3, 32, 32} : std::vector<int64_t>{kSequence};
  options.num_classes = kClasses;
  options.depth = 2;
  options.width = 64;
  options.moe = {.experts = 4, .top_k = 2, .capacity_factor = capacity_factor, .every = 1};
  options.moe_groups = groups;
  options.expert_shard = shard;
  options.expert_shards = shards;
  return options;
}

std::shared_ptr<runtime::ZooModel> build(const ModelOptions& options) {
  torch::manual_seed(7);
  auto model =
      runtime::make_model(options.input_shape.size() == 3 ? "vit_moe" : "bert_moe", options);
  model->to(torch::kDouble);
  return model;
}

torch::Tensor loss_of(runtime::ZooModel& model, const torch::Tensor& ids,
                      const torch::Tensor& labels) {
  const torch::Tensor task = torch::nn::functional::cross_entropy(model.forward(ids), labels);
  return task + kLoadBalanceWeight * model.auxiliary_loss();  // of the forward just run
}

int64_t dropped(runtime::ZooModel& model) {
  int64_t total = 0;
  for (auto* mixture : runtime::mixtures_of(model)) total += mixture->dropped_choices();
  return total;
}

// The reference's parameter that rank `shard` holds under `name` (its experts renumbered
// from 0: expert j of shard s is expert s x local + j of the whole model).
torch::Tensor reference_parameter(runtime::ZooModel& reference, const std::string& name,
                                  int64_t shard, int64_t local) {
  const std::string marker = ".moe.experts.";
  const size_t at = name.find(marker);
  if (at == std::string::npos) return reference.named_parameters()[name];
  const size_t digits = at + marker.size();
  const size_t end = name.find('.', digits);
  const int64_t j = std::stoll(name.substr(digits, end - digits));
  const std::string global =
      name.substr(0, digits) + std::to_string(shard * local + j) + name.substr(end);
  return reference.named_parameters()[global];
}

// A global batch of token ids and labels for `world` ranks of kPerRank samples, from one seed.
struct TokenBatch {
  torch::Tensor ids, labels;
};
TokenBatch global_batch(int world, const std::string& model = "bert_moe") {
  torch::manual_seed(11);
  TokenBatch batch;
  batch.ids = model == "vit_moe"
                  ? torch::randn({world * kPerRank, 3, 32, 32}, torch::kDouble)
                  : torch::randint(30522, {world * kPerRank, kSequence}, torch::kLong);
  batch.labels = torch::randint(kClasses, {world * kPerRank}, torch::kLong);
  return batch;
}

// A rank's model joined to its expert group, and its sync over its parameters by name: the
// dense part by DDP's reducer (ReducerOptions) or sharded (ReplicaShardOptions).
template <typename DenseOptions>
std::unique_ptr<ExpertParallelSync> rank_sync(runtime::ZooModel& model, runtime::Communicator& comm,
                                              DenseOptions dense) {
  for (auto* mixture : runtime::mixtures_of(model)) mixture->set_expert_group(&comm);
  std::vector<at::Tensor> parameters;
  std::vector<std::string> names;
  for (const auto& item : model.named_parameters()) {
    names.push_back(item.key());
    parameters.push_back(item.value());
  }
  return std::make_unique<ExpertParallelSync>(parameters, names, runtime::expert_parameters(model),
                                              comm, std::move(dense));
}

void expect_step_matches_one_process(double capacity_factor, bool expect_drops,
                                     const std::string& model_name = "bert_moe") {
  constexpr int kWorld = 2;
  torch::set_num_threads(1);
  const auto [ids, labels] = global_batch(kWorld, model_name);

  auto reference = build(options_for(capacity_factor, kWorld, 0, 1, model_name));
  torch::optim::SGD reference_sgd(reference->parameters(), kLearningRate);
  const torch::Tensor reference_loss = loss_of(*reference, ids, labels);
  reference_loss.backward();
  reference_sgd.step();
  if (expect_drops) {
    EXPECT_GT(dropped(*reference), 0);
  } else {
    EXPECT_EQ(dropped(*reference), 0);
  }

  // Built one after another (torch's generator is global), trained on a thread each.
  std::vector<std::shared_ptr<runtime::ZooModel>> ranks;
  for (int r = 0; r < kWorld; ++r)
    ranks.push_back(build(options_for(capacity_factor, 1, r, kWorld, model_name)));
  std::vector<double> losses(kWorld);
  const auto errors = runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& comm) {
    runtime::ZooModel& model = *ranks[r];
    const auto sync =
        rank_sync(model, comm, ReducerOptions{.bucket_mb = 0.05, .first_bucket_mb = 0.01});
    torch::optim::SGD sgd(model.parameters(), kLearningRate);
    const torch::Tensor loss = loss_of(model, ids.narrow(0, r * kPerRank, kPerRank),
                                       labels.narrow(0, r * kPerRank, kPerRank));
    loss.backward();
    sync->finish_backward();
    sgd.step();
    losses[r] = loss.item<double>();
  });
  for (const auto& error : errors) ASSERT_EQ(error, "");

  // The ranks' mean loss is the global batch's (equal shares, balancing loss per group).
  EXPECT_NEAR((losses[0] + losses[1]) / kWorld, reference_loss.item<double>(),
              1e-5 * std::abs(reference_loss.item<double>()));
  const int64_t local = 4 / kWorld;
  for (int r = 0; r < kWorld; ++r) {
    // Each rank holds the dense part and its two experts: fewer parameters than the reference.
    EXPECT_LT(ranks[r]->parameters().size(), reference->parameters().size());
    for (const auto& item : ranks[r]->named_parameters()) {
      const torch::Tensor expected = reference_parameter(*reference, item.key(), r, local);
      ASSERT_TRUE(expected.defined()) << item.key();
      EXPECT_TRUE(torch::allclose(item.value(), expected, 1e-5, 1e-12))
          << "rank " << r << " " << item.key() << " differs by "
          << (item.value() - expected).abs().max().item<double>();
    }
  }
  // The step moved the experts: a comparison of untouched weights would prove nothing.
  auto untouched = build(options_for(capacity_factor, kWorld, 0, 1, model_name));
  const std::string expert = "encoder.layer.1.moe.experts.3.0.weight";
  EXPECT_FALSE(torch::allclose(untouched->named_parameters()[expert],
                               reference->named_parameters()[expert], 1e-9, 1e-12));
}

TEST(ExpertParallel, OneStepEqualsOneProcessOnTheGlobalBatchWithoutDrops) {
  // Capacity ceil(4 x 18 x 2 / 4) = 36 >= the 18 tokens a rank routes: nothing dropped.
  expect_step_matches_one_process(4.0, false);
}

TEST(ExpertParallel, OneStepEqualsOneProcessOnTheGlobalBatchWithDrops) {
  // Capacity ceil(0.5 x 18 x 2 / 4) = 5 of 36 choices per rank and layer: some dropped.
  expect_step_matches_one_process(0.5, true);
}

// ViT-MoE (HiDup's ViT-SGMoE): the same layer behind patch embeddings and pre-norm blocks.
TEST(ExpertParallel, AVitMoeStepEqualsOneProcessOnTheGlobalBatchWithDrops) {
  // Capacity ceil(0.5 x 15 x 2 / 4) = 4 an expert, 16 of a rank's 30 choices a layer: some dropped.
  expect_step_matches_one_process(0.5, true, "vit_moe");
}

// The dense part sharded at ZeRO stage 1, 2 or 3 over the ranks, the experts stepped beside its
// chunk by the same AdamW: after 10 steps every parameter equals one process's (float64).
void expect_sharded_dense_part_matches_one_process(ZeroStage stage) {
  constexpr int kWorld = 2, kSteps = 10;
  const runtime::WorkerOptimizer adamw{"adamw", 0.01, 0.0, 0.9, 0.999, 1e-8, 0.01};
  torch::set_num_threads(1);
  const auto [ids, labels] = global_batch(kWorld);
  auto reference = build(options_for(4.0, kWorld, 0, 1));
  const auto reference_optimizer = runtime::make_optimizer(adamw, reference->parameters());
  for (int step = 0; step < kSteps; ++step) {
    reference_optimizer->zero_grad();
    loss_of(*reference, ids, labels).backward();
    reference_optimizer->step();
  }
  std::vector<std::shared_ptr<runtime::ZooModel>> ranks;
  for (int r = 0; r < kWorld; ++r) ranks.push_back(build(options_for(4.0, 1, r, kWorld)));
  const auto errors = runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& comm) {
    runtime::ZooModel& model = *ranks[r];
    const auto sync = rank_sync(
        model, comm,
        ReplicaShardOptions{
            stage, ReducerOptions{.bucket_mb = 0.05, .first_bucket_mb = 0.01}, adamw, {}});
    runtime::TraceRecorder trace;
    for (int step = 0; step < kSteps; ++step) {
      sync->dense_shards()->begin_iteration(trace);  // stage 3 gathers what the step freed
      loss_of(model, ids.narrow(0, r * kPerRank, kPerRank),
              labels.narrow(0, r * kPerRank, kPerRank))
          .backward();
      sync->finish_backward();
      sync->dense_shards()->step(trace);
    }
    sync->dense_shards()->gather_parameters(trace);
  });
  for (const auto& error : errors) ASSERT_EQ(error, "");
  for (int r = 0; r < kWorld; ++r) {
    for (const auto& item : ranks[r]->named_parameters()) {
      const torch::Tensor expected = reference_parameter(*reference, item.key(), r, 4 / kWorld);
      EXPECT_TRUE(torch::allclose(item.value(), expected, 1e-9, 1e-12))
          << "rank " << r << " " << item.key() << " differs by "
          << (item.value() - expected).abs().max().item<double>();
    }
  }
}

TEST(ExpertParallel, ADenseZeroOnePartEqualsOneProcessAfterTenAdamWSteps) {
  expect_sharded_dense_part_matches_one_process(ZeroStage::kOptimizerState);
}

TEST(ExpertParallel, ADenseZeroTwoPartEqualsOneProcessAfterTenAdamWSteps) {
  expect_sharded_dense_part_matches_one_process(ZeroStage::kGradients);
}

TEST(ExpertParallel, ADenseFsdpPartEqualsOneProcessAfterTenAdamWSteps) {
  expect_sharded_dense_part_matches_one_process(ZeroStage::kParameters);
}

TEST(ExpertParallel, ExpertsStartTheSameWhicheverRankHoldsThem) {
  const auto whole = build(options_for(1.25, 1, 0, 1));
  const auto shard = build(options_for(1.25, 1, 1, 2));
  // Shard 1 of 2 holds experts 2 and 3; the dense part is the same too.
  for (const auto& item : shard->named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), reference_parameter(*whole, item.key(), 1, 2)))
        << item.key();
  }
  EXPECT_EQ(runtime::expert_parameters(*shard).size() * 2,
            runtime::expert_parameters(*whole).size());
}

// Every token's one choice is expert 0, rank 0's: rank 1's experts receive nothing, yet both
// ranks must run the dispatch's all-to-all backward, or rank 0 waits for rank 1 for ever.
TEST(ExpertParallel, ARankWhoseExpertsReceiveNoTokenStillRunsBackward) {
  constexpr int kWorld = 2;
  constexpr int64_t kHidden = 8;
  std::vector<std::vector<double>> expert_gradients(kWorld);
  const auto errors = runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& comm) {
    runtime::MoeFeedForward layer(
        kHidden,
        runtime::MoeOptions{
            .experts = 4, .top_k = 1, .capacity_factor = 4.0, .shard = r, .shards = kWorld});
    layer->set_expert_group(&comm);
    {
      const torch::NoGradGuard no_grad;
      layer->router->weight.zero_();
      layer->router->weight[0].fill_(1.0);  // positive tokens: expert 0 scores highest
    }
    // Tokens that take a gradient, as a layer's input inside a model does.
    const torch::Tensor tokens = (torch::rand({2, 3, kHidden}) + 0.5).requires_grad_();
    for (int iteration = 0; iteration < 3; ++iteration) {
      const torch::Tensor output = layer->forward(tokens);
      (output.sum() + layer->auxiliary_loss()).backward();
    }
    for (const auto& p : layer->experts->parameters()) {
      expert_gradients[r].push_back(p.grad().abs().sum().item<double>());
    }
  });
  for (const auto& error : errors) ASSERT_EQ(error, "");
  // Rank 0's expert 0 learned from both ranks' tokens, its expert 1 and rank 1's experts nothing.
  EXPECT_GT(expert_gradients[0][0], 0.0);
  for (size_t i = 4; i < expert_gradients[0].size(); ++i) EXPECT_EQ(expert_gradients[0][i], 0.0);
  for (double gradient : expert_gradients[1]) EXPECT_EQ(gradient, 0.0);
}

TEST(ExpertParallel, UnevenShardsAreRefused) {
  ModelOptions options = options_for(1.25, 1, 0, 3);
  EXPECT_THROW(runtime::make_model("bert_moe", options), std::invalid_argument);
}

}  // namespace
}  // namespace baselines
