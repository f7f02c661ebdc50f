// Pipelines whose stage replicas are ZeRO-1, ZeRO-2 or FSDP (ZeRO-3 gathered once per
// iteration; baselines/sharded/replica_shards.h), over real Gloo (a thread per rank): from one
// seed, after 10 AdamW steps, every parameter equals one process's AdamW on the same global
// batch (float64, relative 1e-9), with 2 stages x 2 replicas and with 3 replicas whose chunks
// are uneven (padded); and what a replica holds and sends is the formula's
// (baselines/sharded/shard_layout.h), counted on its group.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <map>
#include <thread>

#include "baselines/sharded/replica_shards.h"
#include "runtime/comm/counting_communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/optim/optimizer.h"
#include "runtime/pipeline/pipeline_executor.h"
#include "tests/runtime/double_default.h"
#include "tests/runtime/gloo_ranks.h"

namespace {

using baselines::ZeroStage;
using runtime::PipelineLayout;

constexpr int kSteps = 10;
constexpr int64_t kComposedBatch = 12;
const runtime::ModelOptions kMlp{{16}, 4, /*depth=*/4, /*width=*/31};  // 10 layers

runtime::WorkerOptimizer adamw() { return {"adamw", 0.01, 0.0, 0.9, 0.999, 1e-8, 0.01}; }

std::shared_ptr<runtime::ZooModel> seeded_mlp() {
  torch::manual_seed(5);
  return runtime::make_model("mlp", kMlp);
}

runtime::SyntheticBatch global_batch(runtime::ZooModel& model) {
  torch::manual_seed(17);
  return runtime::make_synthetic_batch(model, kMlp, kComposedBatch, "mse");
}

// One process, the whole batch, AdamW: the parameters after kSteps steps by name.
std::map<std::string, torch::Tensor> one_process() {
  auto model = seeded_mlp();
  const auto batch = global_batch(*model);
  auto optimizer = runtime::make_optimizer(adamw(), model->parameters());
  for (int step = 0; step < kSteps; ++step) {
    optimizer->zero_grad();
    torch::mse_loss(model->forward(batch.input), batch.target).backward();
    optimizer->step();
  }
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : model->named_parameters()) out[item.key()] = item.value().detach();
  return out;
}

struct ReplicaOutcome {
  std::map<std::string, torch::Tensor> parameters;
  baselines::ShardLayout layout;
  std::vector<torch::Tensor> parameters_held;  // what the replica holds after its last step
  std::vector<torch::Tensor> gradients;
  double bytes_sent = 0;  // on its replica group, per iteration
  std::string error;
};

// One rank of the composed pipeline: its stage, its replicas' group counted, kSteps steps.
void train_composed_rank(const PipelineLayout& layout, ZeroStage zero, int rank, int world,
                         c10::intrusive_ptr<c10d::Store> store, runtime::ZooModel& model,
                         const runtime::SyntheticBatch& batch, ReplicaOutcome& out) {
  const auto timeout = std::chrono::seconds(60);
  auto everyone = runtime::make_gloo_communicator(store, rank, world, timeout);
  const int stage_index = layout.stage_of(rank);
  const int replicas = static_cast<int>(layout.stages[stage_index].ranks.size());
  auto prefixed =
      c10::make_intrusive<c10d::PrefixStore>("stage" + std::to_string(stage_index), store);
  auto group =
      runtime::make_gloo_communicator(prefixed, layout.replica_of(rank), replicas, timeout);
  runtime::CountingCommunicator counted(*group);
  baselines::ReplicaShards* shards = nullptr;
  runtime::PipelineOptions options;
  options.layout = layout;
  options.micro_batches = 2;
  options.replica_sync = baselines::replica_shards_factory(
      {zero, baselines::replica_sum_options(0.001, 0.001), adamw(), {}}, shards);
  runtime::PipelineStage stage(model, options, *everyone, &counted, runtime::sample_of(batch));
  runtime::TraceRecorder trace;
  for (int step = 0; step < kSteps; ++step) {
    shards->begin_iteration(trace);
    stage.run_iteration(batch.input, batch.target, trace);
    shards->step(trace);
    // Counted from the second iteration, as a run counts after its warm-up: the first finds
    // the parameters whole as built, where FSDP's later ones gather what the step freed.
    if (step == 0) counted.reset();
  }
  out.layout = shards->layout();
  out.parameters_held = shards->held_parameters();
  out.gradients = shards->held_gradients();
  out.bytes_sent = runtime::ring_bytes_sent(counted.payload(), replicas) / (kSteps - 1);
  shards->gather_parameters(trace);  // FSDP's, to read them whole
  const auto names = stage.stage_parameter_names();
  const auto values = stage.stage_parameters();
  for (size_t i = 0; i < names.size(); ++i) out.parameters[names[i]] = values[i].detach();
  everyone->barrier();
}

std::vector<ReplicaOutcome> train_composed(const PipelineLayout& layout, ZeroStage zero,
                                           int world) {
  std::vector<std::shared_ptr<runtime::ZooModel>> models;
  std::vector<runtime::SyntheticBatch> batches;
  for (int r = 0; r < world; ++r) {
    models.push_back(seeded_mlp());
    batches.push_back(global_batch(*models.back()));
  }
  std::vector<ReplicaOutcome> outcomes(world);
  const auto errors = runtime_test::on_every_rank_with_store(
      world, [&](int r, const c10::intrusive_ptr<c10d::Store>& store) {
        train_composed_rank(layout, zero, r, world, store, *models[r], batches[r], outcomes[r]);
      });
  for (int r = 0; r < world; ++r) outcomes[r].error = errors[r];
  return outcomes;
}

struct CompositionCase {
  std::string label;
  PipelineLayout layout;
  int world;
  ZeroStage zero;
};

void PrintTo(const CompositionCase& c, std::ostream* out) { *out << c.label; }

class PipelineComposition : public testing::TestWithParam<CompositionCase> {};

TEST_P(PipelineComposition, ParametersEqualOneProcessAfterTenAdamWSteps) {
  const runtime_test::DoubleDefault float64;
  const CompositionCase c = GetParam();
  const auto expected = one_process();
  const auto outcomes = train_composed(c.layout, c.zero, c.world);
  std::map<std::string, int> covered;
  for (int r = 0; r < c.world; ++r) {
    ASSERT_EQ(outcomes[r].error, "") << "rank " << r;
    for (const auto& [name, value] : outcomes[r].parameters) {
      ++covered[name];
      EXPECT_TRUE(torch::allclose(value, expected.at(name), 1e-9, 1e-12))
          << "rank " << r << " " << name << " max diff "
          << (value - expected.at(name)).abs().max().item<double>();
    }
  }
  EXPECT_EQ(covered.size(), expected.size()) << "every parameter lives on a stage";
}

// The formula's memory and bytes: a replica's parameters (whole at stages 1 and 2, its chunk at
// 3), gradients (whole at stage 1, its chunk at 2 and 3) and bytes sent per iteration on its
// group (one gather per iteration at stage 3), against sharded_memory and sharded_traffic.
TEST_P(PipelineComposition, HeldGradientsAndBytesSentAreTheFormulas) {
  const runtime_test::DoubleDefault float64;
  const CompositionCase c = GetParam();
  const auto outcomes = train_composed(c.layout, c.zero, c.world);
  for (int r = 0; r < c.world; ++r) {
    ASSERT_EQ(outcomes[r].error, "") << "rank " << r;
    const baselines::ShardLayout& layout = outcomes[r].layout;
    const auto bytes_of = [](const std::vector<torch::Tensor>& tensors) {
      int64_t bytes = 0;
      for (const auto& t : tensors) bytes += t.numel() * t.element_size();
      return bytes;
    };
    const auto memory = baselines::sharded_memory(layout, c.zero, 8, 2);
    EXPECT_EQ(bytes_of(outcomes[r].parameters_held), memory.parameter_bytes) << "rank " << r;
    EXPECT_EQ(bytes_of(outcomes[r].gradients), memory.gradient_bytes) << "rank " << r;
    EXPECT_DOUBLE_EQ(
        outcomes[r].bytes_sent,
        baselines::sharded_traffic(layout, c.zero, 8, /*reshard_after_forward=*/false).total())
        << "rank " << r;
  }
}

std::vector<CompositionCase> composition_cases() {
  const PipelineLayout two_by_two{{{0, 3, {0, 1}}, {4, 9, {2, 3}}}};
  const PipelineLayout two_by_three{{{0, 3, {0, 1, 2}}, {4, 9, {3, 4, 5}}}};
  return {{"zero1_2x2", two_by_two, 4, ZeroStage::kOptimizerState},
          {"zero2_2x2", two_by_two, 4, ZeroStage::kGradients},
          {"zero1_2x3_uneven", two_by_three, 6, ZeroStage::kOptimizerState},
          {"zero2_2x3_uneven", two_by_three, 6, ZeroStage::kGradients},
          {"fsdp_2x2", two_by_two, 4, ZeroStage::kParameters},
          {"fsdp_2x3_uneven", two_by_three, 6, ZeroStage::kParameters}};
}

INSTANTIATE_TEST_SUITE_P(Stages, PipelineComposition, testing::ValuesIn(composition_cases()),
                         [](const auto& info) { return info.param.label; });

// The 2 x 3 layout's chunks are uneven: some stage's parameters do not divide by 3, so its
// last chunk is padded (the case the equality above covers).
TEST(PipelineCompositionLayout, ThreeReplicasPadAStagesChunks) {
  const runtime_test::DoubleDefault float64;
  const auto outcomes =
      train_composed({{{0, 3, {0, 1, 2}}, {4, 9, {3, 4, 5}}}}, ZeroStage::kOptimizerState, 6);
  bool padded = false;
  for (const auto& o : outcomes) {
    ASSERT_EQ(o.error, "");
    padded |= o.layout.padded_elements() != o.layout.elements();
  }
  EXPECT_TRUE(padded);
}

}  // namespace
