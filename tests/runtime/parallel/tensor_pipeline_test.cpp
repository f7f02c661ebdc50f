// Tensor parallelism inside pipeline stages (TP x PP, and with replicas TP x PP x DP: 3D), over
// real Gloo (a thread per rank), as rank/pipeline_worker.cpp runs it: the layout places tensor
// groups, each tensor slice runs the pipeline on a group of its own, the slices of a stage split
// its layers. From one seed, after 10 AdamW steps, the slices put together give one process's
// parameters (float64, relative 1e-9), with and without sequence parallelism, under 1F1B and
// ZB-H1; and the bytes each rank sends on its tensor group per iteration are Megatron's for its
// stage's blocks (runtime/parallel/tensor_traffic.h), counted.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>

#include "baselines/ddp/gradient_reducer.h"
#include "runtime/comm/counting_communicator.h"
#include "runtime/parallel/tensor_region.h"
#include "runtime/parallel/tensor_traffic.h"
#include "runtime/pipeline/pipeline_executor.h"
#include "tests/runtime/double_default.h"
#include "tests/runtime/gloo_ranks.h"
#include "tests/runtime/parallel/tensor_fixture.h"

namespace {

using namespace tensor_test;  // the fixture's names are this test's vocabulary

constexpr int kMicroBatches = 2;

struct StagedTensorCase {
  int data = 1;  // replicas of each stage
  bool sequence_parallel = false;
  runtime::PipelineSchedule schedule = runtime::PipelineSchedule::kDapple;
  static constexpr int kTensor = 2, kStages = 2;
  int world() const { return kStages * data * kTensor; }
};

// Two stages of llama's five layers (embedding and block 0; block 1, norm and head), each on
// `data` tensor groups: layout rank v is ranks 2v and 2v + 1.
runtime::PipelineLayout staged_layout(const StagedTensorCase& c) {
  runtime::PipelineLayout layout;
  for (int stage = 0; stage < c.kStages; ++stage) {
    std::vector<int> groups;
    for (int d = 0; d < c.data; ++d) groups.push_back(stage * c.data + d);
    layout.stages.push_back({stage == 0 ? 0 : 2, stage == 0 ? 1 : 4, groups});
  }
  return layout;
}

struct StagedOutcome {
  Parameters parameters;               // the rank's stage's slices
  runtime::CollectivePayload payload;  // on its tensor group, every step
};

void train_staged_rank(const StagedTensorCase& c, int rank,
                       const c10::intrusive_ptr<c10d::Store>& store, runtime::ZooModel& model,
                       const runtime::SyntheticBatch& batch, StagedOutcome& out) {
  const int t = c.kTensor, group = rank / t, slice = rank % t;
  const auto pipeline = group_of(store, "slice" + std::to_string(slice), group, c.world() / t);
  const auto tensor = group_of(store, "tensor" + std::to_string(group), slice, t);
  runtime::CountingCommunicator counted(*tensor);
  model.tensor_region()->group = &counted;
  runtime::PipelineOptions options;
  options.layout = staged_layout(c);
  options.schedule = c.schedule;
  options.micro_batches = kMicroBatches;
  options.loss = "cross_entropy";
  options.replica_sync = baselines::replica_sum_factory(25, 1);
  std::unique_ptr<runtime::Communicator> replicas;
  if (c.data > 1) {
    replicas =
        group_of(store, "slice" + std::to_string(slice) + "stage" + std::to_string(group / c.data),
                 group % c.data, c.data);
  }
  runtime::PipelineStage stage(model, options, *pipeline, replicas.get(),
                               runtime::sample_of(batch));
  auto optimizer = runtime::make_optimizer(tensor_adamw(), stage.stage_parameters());
  counted.reset();  // the shape-finding forward above is not an iteration's
  runtime::TraceRecorder trace;
  for (int step = 0; step < kTensorSteps; ++step) {
    optimizer->zero_grad();
    stage.run_iteration(batch.input, batch.target, trace);
    optimizer->step();
  }
  const auto names = stage.stage_parameter_names();
  const auto values = stage.stage_parameters();
  for (size_t i = 0; i < names.size(); ++i) out.parameters[names[i]] = values[i].detach();
  out.payload = counted.payload();
  pipeline->barrier();
}

std::vector<StagedOutcome> train_staged(const StagedTensorCase& c) {
  const runtime_test::DoubleDefault precision;
  std::vector<std::shared_ptr<runtime::ZooModel>> models;
  for (int r = 0; r < c.world(); ++r) {
    models.push_back(
        seeded_decoder(decoder_options(r % c.kTensor, c.kTensor, c.sequence_parallel)));
  }
  const auto batch = decoder_batch();
  std::vector<StagedOutcome> outcomes(c.world());
  const auto errors = runtime_test::on_every_rank_with_store(
      c.world(), [&](int r, const c10::intrusive_ptr<c10d::Store>& store) {
        train_staged_rank(c, r, store, *models[r], batch, outcomes[r]);
      });
  for (int r = 0; r < c.world(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  return outcomes;
}

// Each tensor group's slices put together, against one process: every parameter held by some
// group, and by every replica of its stage alike.
void expect_staged_one_process(const std::vector<StagedOutcome>& outcomes,
                               const StagedTensorCase& c) {
  const Parameters reference = [] {
    const runtime_test::DoubleDefault precision;
    return one_process_decoder("llama");
  }();
  std::map<std::string, int> holders;
  for (int group = 0; group < c.world() / c.kTensor; ++group) {
    for (const auto& [name, first_slice] : outcomes[group * c.kTensor].parameters) {
      std::vector<torch::Tensor> slices;
      for (int j = 0; j < c.kTensor; ++j) {
        slices.push_back(outcomes[group * c.kTensor + j].parameters.at(name));
      }
      const torch::Tensor got = whole_of(name, slices);
      EXPECT_TRUE(torch::allclose(got, reference.at(name), 1e-9, 1e-10))
          << name << " of group " << group << " differs by "
          << (got - reference.at(name)).abs().max().item<double>();
      ++holders[name];
    }
  }
  for (const auto& [name, value] : reference) EXPECT_EQ(holders[name], c.data) << name;
}

// Per iteration, each stage's one block: Megatron's bytes for the replica's rows (a sum over
// micro-batches, as the formula is linear in them). Under sequence parallelism also the end of
// the split layers on its stage (the first block's backward gather, the last's forward one)
// and its two norms' partial gradients, all-reduced once per micro-batch.
void expect_stage_bytes(const std::vector<StagedOutcome>& outcomes, const StagedTensorCase& c) {
  const int64_t rows = kTensorBatch / c.data, bsh = rows * kTokens * kWidth;
  // One block and one of the two ends per stage, the norms' gradients per micro-batch.
  const runtime::TensorTrafficShape stage{
      rows, kTokens, kWidth, 1, c.kTensor, c.sequence_parallel, 8, 2, 1, kMicroBatches};
  for (const auto& outcome : outcomes) {
    const auto& payload = outcome.payload;
    EXPECT_DOUBLE_EQ(runtime::ring_bytes_sent(payload, c.kTensor) / kTensorSteps,
                     runtime::tensor_iteration_bytes_sent(stage, 8));
    if (!c.sequence_parallel) {
      EXPECT_EQ(payload.all_reduce, kTensorSteps * 4 * bsh * 8);
      continue;
    }
    EXPECT_EQ(payload.all_gather, kTensorSteps * 5 * bsh / 2 * 8);
    EXPECT_EQ(payload.reduce_scatter, kTensorSteps * 4 * bsh * 8);
    EXPECT_EQ(payload.all_reduce, kTensorSteps * kMicroBatches * 2 * kWidth * 8);
  }
}

TEST(TensorPipeline, TwoStagesOfTwoSlicesTrainAsOneProcess) {
  for (const bool sequence : {false, true}) {
    const StagedTensorCase c{1, sequence};
    const auto outcomes = train_staged(c);
    expect_staged_one_process(outcomes, c);
    expect_stage_bytes(outcomes, c);
  }
}

TEST(TensorPipeline, ThreeAxesOnEightRanksTrainAsOneProcess) {
  // 2 stages x 2 replicas x tensor 2: each slice's replicas sum its gradients.
  const StagedTensorCase c{2, true};
  const auto outcomes = train_staged(c);
  expect_staged_one_process(outcomes, c);
  expect_stage_bytes(outcomes, c);
}

TEST(TensorPipeline, SplitBackwardPassesTrainAsOneProcess) {
  // ZB-H1 cuts each layer's backward into I and W: the slices' collectives still meet.
  const StagedTensorCase c{1, false, runtime::PipelineSchedule::kZbH1};
  const auto outcomes = train_staged(c);
  expect_staged_one_process(outcomes, c);
  expect_stage_bytes(outcomes, c);
}

}  // namespace
