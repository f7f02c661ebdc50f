// Tensor parallelism (runtime/parallel/tensor_region.h) on the Llama-style decoder and the
// BERT-style encoder, over real Gloo (a thread per rank): from one seed, after 10 AdamW steps,
// the shards of every rank put together give the parameters of one process trained on the same
// global batch (float64, relative 1e-9), at t = 2 and 4, with sequence parallelism, composed
// with data parallelism (2 x 2), with every block recomputed and with the vocabulary split; and
// the bytes each rank sends on its tensor group are Megatron's formula's
// (runtime/parallel/tensor_traffic.h), counted.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <map>
#include <thread>

#include "baselines/sharded/sharded_data_parallel.h"
#include "runtime/comm/counting_communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/optim/optimizer.h"
#include "runtime/parallel/tensor_region.h"
#include "runtime/parallel/tensor_traffic.h"
#include "runtime/parallel/vocabulary_parallel.h"
#include "tests/runtime/double_default.h"
#include "tests/runtime/gloo_ranks.h"
#include "tests/runtime/parallel/tensor_fixture.h"

namespace {

using namespace tensor_test;  // the fixture's names are this test's vocabulary

struct TensorCase {
  std::string model = "llama";
  int tensor = 2;
  int data = 1;
  bool sequence_parallel = false;
  bool checkpointing = false;        // every block recomputed in backward
  int zero_stage = 0;                // the replicas sharded by ZeRO's stage (baselines/sharded/)
  bool vocabulary_parallel = false;  // llama's embedding and head split by vocabulary rows
  bool recompute_gather = false;     // sequence parallelism keeping only its token shards
};

// The case's loss: with the vocabulary split, Megatron's cross entropy over the logits' shards.
torch::Tensor case_loss(const TensorCase& c, runtime::ZooModel& model, const torch::Tensor& output,
                        const torch::Tensor& target) {
  if (!c.vocabulary_parallel) return runtime::training_loss(loss_of(c.model), output, target);
  return runtime::vocabulary_cross_entropy(*model.tensor_region()->group, output, target,
                                           static_cast<double>(target.numel()));
}

struct TensorRankOutcome {
  Parameters parameters;
  runtime::CollectivePayload payload;  // on the tensor group, all steps
  std::string error;
};

// The replicas' sum by hand: every gradient all-reduced over the data group and averaged.
Parameters train_replicated(const TensorCase& c, runtime::ZooModel& model,
                            runtime::Communicator* data_group, const torch::Tensor& input,
                            const torch::Tensor& target) {
  auto optimizer = runtime::make_optimizer(tensor_adamw(), model.parameters());
  for (int step = 0; step < kTensorSteps; ++step) {
    optimizer->zero_grad();
    case_loss(c, model, model.forward(input), target).backward();
    for (auto& p : model.parameters()) {
      if (data_group == nullptr) break;
      data_group->all_reduce_sum(p.mutable_grad())->wait();
      p.mutable_grad().div_(c.data);
    }
    optimizer->step();
  }
  return named(model);
}

// The replicas sharded by ZeRO's stage over the data group (FSDP x TP at stage 3).
Parameters train_sharded(const TensorCase& c, const std::shared_ptr<runtime::ZooModel>& model,
                         runtime::Communicator& data_group, const torch::Tensor& input,
                         const torch::Tensor& target) {
  baselines::ShardedOptions options;
  options.stage = baselines::zero_stage_from(c.zero_stage);
  baselines::ShardedDataParallel sharded(model, data_group, options, tensor_adamw());
  for (int step = 0; step < kTensorSteps; ++step) {
    sharded.zero_grad();
    case_loss(c, *model, sharded.forward(input), target).backward();
    sharded.finish_backward();
    sharded.step();
  }
  const std::vector<torch::Tensor> whole = sharded.full_parameters();
  Parameters out;
  size_t i = 0;
  for (const auto& item : model->named_parameters()) out[item.key()] = whole.at(i++).detach();
  return out;
}

// Rank d x t + j: tensor shard j of replica d, which trains on rows [d B / D, (d + 1) B / D).
// Its model was drawn before the threads started (torch's generator is one per process).
void train_tensor_rank(const TensorCase& c, int rank, const c10::intrusive_ptr<c10d::Store>& store,
                       const std::shared_ptr<runtime::ZooModel>& model,
                       const runtime::SyntheticBatch& batch, TensorRankOutcome& out) {
  const int replica = rank / c.tensor, shard = rank % c.tensor;
  const auto tensor_group = group_of(store, "tensor" + std::to_string(replica), shard, c.tensor);
  runtime::CountingCommunicator counted(*tensor_group);
  model->tensor_region()->group = &counted;
  std::unique_ptr<runtime::Communicator> data_group;
  if (c.data > 1) data_group = group_of(store, "data" + std::to_string(shard), replica, c.data);
  const int64_t rows = kTensorBatch / c.data;
  const auto input = batch.input.narrow(0, replica * rows, rows);
  const auto target = batch.target.narrow(0, replica * rows, rows);
  out.parameters = c.zero_stage > 0 ? train_sharded(c, model, *data_group, input, target)
                                    : train_replicated(c, *model, data_group.get(), input, target);
  out.payload = counted.payload();
}

std::vector<TensorRankOutcome> train_tensor_parallel(const TensorCase& c) {
  const runtime_test::DoubleDefault precision;
  const int world = c.tensor * c.data;
  std::vector<std::shared_ptr<runtime::ZooModel>> models;
  for (int r = 0; r < world; ++r) {
    auto options = decoder_options(r % c.tensor, c.tensor, c.sequence_parallel, c.model);
    options.activation_checkpointing = c.checkpointing;
    options.vocabulary_parallel = c.vocabulary_parallel;
    options.recompute_gather = c.recompute_gather;
    models.push_back(seeded_decoder(options, c.model));
  }
  const auto batch = decoder_batch(c.model);
  std::vector<TensorRankOutcome> outcomes(world);
  const auto errors = runtime_test::on_every_rank_with_store(
      world, [&](int r, const c10::intrusive_ptr<c10d::Store>& store) {
        train_tensor_rank(c, r, store, models[r], batch, outcomes[r]);
      });
  for (int r = 0; r < world; ++r) outcomes[r].error = errors[r];
  return outcomes;
}

// Every replica's shards, put together, against one process; whole parameters on every rank.
void expect_one_process(const std::vector<TensorRankOutcome>& outcomes, const TensorCase& c) {
  const Parameters reference = [&] {
    const runtime_test::DoubleDefault precision;
    return one_process_decoder(c.model);
  }();
  for (const auto& outcome : outcomes) ASSERT_EQ(outcome.error, "");
  for (int replica = 0; replica < c.data; ++replica) {
    for (const auto& [name, expected] : reference) {
      std::vector<torch::Tensor> shards;
      for (int j = 0; j < c.tensor; ++j) {
        shards.push_back(outcomes[replica * c.tensor + j].parameters.at(name));
      }
      const bool vocabulary_rows =
          c.vocabulary_parallel && (name == "embed_tokens.weight" || name == "lm_head.weight");
      const torch::Tensor got = vocabulary_rows ? torch::cat(shards, 0) : whole_of(name, shards);
      // Absolute 1e-10: bert's key bias has no gradient in exact arithmetic (softmax ignores a
      // shift shared by a query's scores), so AdamW turns its float64 rounding noise (~1e-17)
      // into steps of ~1e-11 that differ with the order of the sums.
      EXPECT_TRUE(torch::allclose(got, expected, 1e-9, 1e-10))
          << name << " of replica " << replica << " differs by "
          << (got - expected).abs().max().item<double>();
    }
  }
}

runtime::TensorTrafficShape traffic_of(const TensorCase& c) {
  runtime::TensorTrafficShape shape{
      kTensorBatch / c.data, kTokens, width_of(c.model),        kDepth, c.tensor,
      c.sequence_parallel,   8,       c.model == "bert" ? 6 : 2};
  shape.vocabulary_parallel = c.vocabulary_parallel;
  shape.recompute_gather = c.recompute_gather;
  return shape;
}

// Every rank of the case sent on its tensor group, per step, what Megatron's formula says.
void expect_formula_bytes(const std::vector<TensorRankOutcome>& outcomes, const TensorCase& c) {
  for (const auto& outcome : outcomes) {
    EXPECT_DOUBLE_EQ(runtime::ring_bytes_sent(outcome.payload, c.tensor) / kTensorSteps,
                     runtime::tensor_iteration_bytes_sent(traffic_of(c), 8))
        << c.model << " tensor " << c.tensor << " data " << c.data << " stage " << c.zero_stage;
  }
}

TEST(TensorParallel, TwoShardsTrainAsOneProcess) {
  const TensorCase c{"llama", 2, 1, false};
  const auto outcomes = train_tensor_parallel(c);
  expect_one_process(outcomes, c);
  // Four all-reduces of b s h per layer, nothing else, on every rank.
  const int64_t bsh = kTensorBatch * kTokens * kWidth;
  for (const auto& outcome : outcomes) {
    EXPECT_EQ(outcome.payload.all_reduce, kTensorSteps * kDepth * 4 * bsh * 8);
    EXPECT_EQ(outcome.payload.all_gather + outcome.payload.reduce_scatter, 0);
  }
  expect_formula_bytes(outcomes, c);
}

TEST(TensorParallel, FourShardsKeepWholeKeyValueGroups) {
  const TensorCase c{"llama", 4, 1, false};
  const auto outcomes = train_tensor_parallel(c);
  expect_one_process(outcomes, c);
  for (const auto& outcome : outcomes) {
    EXPECT_EQ(outcome.parameters.at("layers.0.self_attn.k_proj.weight").size(0), 8);   // 1 of 4
    EXPECT_EQ(outcome.parameters.at("layers.0.self_attn.q_proj.weight").size(0), 16);  // 2 of 8
  }
  expect_formula_bytes(outcomes, c);
}

TEST(TensorParallel, SequenceParallelTrainsAsOneProcess) {
  const TensorCase c{"llama", 2, 1, true};
  const auto outcomes = train_tensor_parallel(c);
  expect_one_process(outcomes, c);
  // Per layer 4 all-gathers of b s/t h (this rank's input) and 4 reduce-scatters of b s h; the
  // model's ends 2 all-gathers more; the norms' gradients 2 all-reduces of h per layer.
  const int64_t bsh = kTensorBatch * kTokens * kWidth;
  for (const auto& outcome : outcomes) {
    EXPECT_EQ(outcome.payload.all_gather, kTensorSteps * (kDepth * 4 + 2) * bsh / 2 * 8);
    EXPECT_EQ(outcome.payload.reduce_scatter, kTensorSteps * kDepth * 4 * bsh * 8);
    EXPECT_EQ(outcome.payload.all_reduce, kTensorSteps * kDepth * 2 * kWidth * 8);
  }
  expect_formula_bytes(outcomes, c);
}

TEST(TensorParallel, TwoByTwoWithDataParallelTrainsAsOneProcess) {
  for (const bool sequence : {false, true}) {
    const TensorCase c{"llama", 2, 2, sequence};
    const auto outcomes = train_tensor_parallel(c);
    expect_one_process(outcomes, c);
    expect_formula_bytes(outcomes, c);
  }
}

TEST(TensorParallel, RecomputedBlocksTrainAsOneProcessAndRepeatTheForwardCollectives) {
  const int64_t bsh = kTensorBatch * kTokens * kWidth;
  for (const bool sequence : {false, true}) {
    const TensorCase c{"llama", 2, 1, sequence, true};
    const auto outcomes = train_tensor_parallel(c);
    expect_one_process(outcomes, c);
    // The recomputation runs each block's forward again: its 2 all-reduces (or 2 all-gathers
    // and 2 reduce-scatters) once more per layer, and the last block's rejoining all-gather.
    const auto& payload = outcomes[0].payload;
    if (!sequence) {
      EXPECT_EQ(payload.all_reduce, kTensorSteps * kDepth * 6 * bsh * 8);
    } else {
      EXPECT_EQ(payload.all_gather, kTensorSteps * (kDepth * 6 + 3) * bsh / 2 * 8);
      EXPECT_EQ(payload.reduce_scatter, kTensorSteps * kDepth * 6 * bsh * 8);
    }
  }
}

TEST(TensorParallel, BertSplitsItsFusedHeadsAndAddsRowBiasesOnce) {
  // Post-norm blocks, fused q, k, v, biases: with sequence parallelism six partial vectors per
  // block (two LayerNorms' scale and shift, two row-parallel biases).
  for (const bool sequence : {false, true}) {
    const TensorCase c{"bert", 2, 2, sequence};
    const auto outcomes = train_tensor_parallel(c);
    expect_one_process(outcomes, c);
    expect_formula_bytes(outcomes, c);
  }
}

TEST(TensorParallel, ShardedReplicasTrainAsOneProcess) {
  // torchtitan's 2D: ZeRO-1, -2 and FSDP over the data axis of tensor 2 x data 2, and FSDP
  // with sequence parallelism (the norms' partial gradients summed before the reduce-scatter).
  for (const auto& [stage, sequence] :
       std::vector<std::pair<int, bool>>{{1, false}, {2, false}, {3, false}, {3, true}}) {
    TensorCase c{"llama", 2, 2, sequence};
    c.zero_stage = stage;
    const auto outcomes = train_tensor_parallel(c);
    expect_one_process(outcomes, c);
    expect_formula_bytes(outcomes, c);
  }
}

TEST(TensorParallel, VocabularyParallelEmbeddingAndLossTrainAsOneProcess) {
  // Per step, besides the layers' collectives: the embedding's g and the head's f on b s h
  // (all-reduces; under sequence parallelism a reduce-scatter and an all-gather each, in place
  // of the split's ends), and the loss's all-gather of one number a token and two all-reduces of
  // one (float64 here, as the logits); the final norm's gradient too under sequence parallelism.
  const int64_t bs = kTensorBatch * kTokens, bsh = bs * kWidth, layers = kDepth;
  for (const bool sequence : {false, true}) {
    TensorCase c{"llama", 2, 1, sequence};
    c.vocabulary_parallel = true;
    const auto outcomes = train_tensor_parallel(c);
    expect_one_process(outcomes, c);
    for (const auto& outcome : outcomes) {
      EXPECT_EQ(outcome.parameters.at("lm_head.weight").size(0), 48);  // 96 / 2
      const auto& payload = outcome.payload;
      if (!sequence) {
        EXPECT_EQ(payload.all_reduce, kTensorSteps * ((4 * layers + 2) * bsh + 2 * bs) * 8);
        EXPECT_EQ(payload.all_gather, kTensorSteps * bs * 8);
        EXPECT_EQ(payload.reduce_scatter, 0);
      } else {
        EXPECT_EQ(payload.all_reduce, kTensorSteps * ((2 * layers + 1) * kWidth + 2 * bs) * 8);
        EXPECT_EQ(payload.all_gather, kTensorSteps * ((4 * layers + 2) * bsh / 2 + bs) * 8);
        EXPECT_EQ(payload.reduce_scatter, kTensorSteps * (4 * layers + 2) * bsh * 8);
      }
    }
    expect_formula_bytes(outcomes, c);
  }
}

TEST(TensorParallel, VocabularyParallelComposesWithFourShardsAndFsdp) {
  // t = 4 (24 rows of the vocabulary a rank), and tensor 2 x FSDP 2 with sequence parallelism.
  TensorCase four{"llama", 4, 1, false};
  four.vocabulary_parallel = true;
  TensorCase fsdp{"llama", 2, 2, true};
  fsdp.zero_stage = 3;
  fsdp.vocabulary_parallel = true;
  for (const TensorCase& c : {four, fsdp}) {
    const auto outcomes = train_tensor_parallel(c);
    expect_one_process(outcomes, c);
    expect_formula_bytes(outcomes, c);
  }
}

TEST(TensorParallel, SequenceParallelGatheringAgainInBackwardTrainsAsOneProcess) {
  // Megatron's way: each block entry keeps its token shard and all-gathers it again in
  // backward, one all-gather of b s/t h more per entry (2 per layer) than keeping the copy.
  const int64_t bsh = kTensorBatch * kTokens * kWidth;
  TensorCase llama{"llama", 2, 1, true};
  llama.recompute_gather = true;
  const auto outcomes = train_tensor_parallel(llama);
  expect_one_process(outcomes, llama);
  for (const auto& outcome : outcomes) {
    EXPECT_EQ(outcome.payload.all_gather, kTensorSteps * (kDepth * 6 + 2) * bsh / 2 * 8);
    EXPECT_EQ(outcome.payload.reduce_scatter, kTensorSteps * kDepth * 4 * bsh * 8);
  }
  expect_formula_bytes(outcomes, llama);
  // BERT's fused q, k, v and its first linear carry biases; tensor 2 x FSDP 2 shards them.
  TensorCase bert{"bert", 2, 2, true};
  bert.recompute_gather = true;
  bert.zero_stage = 3;
  const auto bert_outcomes = train_tensor_parallel(bert);
  expect_one_process(bert_outcomes, bert);
  expect_formula_bytes(bert_outcomes, bert);
}

TEST(TensorParallel, RefusesAHeadCountTheAxisDoesNotDivide) {
  // 8 heads over 3 ranks: refused as the model is built, naming what does not divide.
  try {
    seeded_decoder(decoder_options(0, 3));
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the attention heads (8) do not split evenly over a tensor axis of 3");
  }
}

TEST(TensorFormula, MegatronsBytesByHand) {
  // b s h = 2 x 4 x 8 = 64 fp16 elements (128 bytes); t = 4: one ring pass sends 3/4 of it.
  runtime::TensorTrafficShape shape{2, 4, 8, 3, 4, false, 2};
  EXPECT_DOUBLE_EQ(runtime::tensor_layer_bytes_sent(shape), 8 * 0.75 * 128);
  EXPECT_DOUBLE_EQ(runtime::tensor_iteration_bytes_sent(shape), 3 * 768.0);
  shape.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(runtime::tensor_layer_bytes_sent(shape), 768.0);  // the same per layer
  // Plus the two ends (2 x 96) and 6 norms' fp32 gradients of 8 (2 x 3/4 x 6 x 32 bytes).
  EXPECT_DOUBLE_EQ(runtime::tensor_iteration_bytes_sent(shape), 3 * 768.0 + 192 + 288);
  // A pipeline stage holding one end of the split layers, over 3 micro-batches (b the rows of
  // all of them): one end, and the norms' gradients all-reduced once per micro-batch.
  shape.ends = 1;
  shape.micro_batches = 3;
  EXPECT_DOUBLE_EQ(runtime::tensor_iteration_bytes_sent(shape), 3 * 768.0 + 96 + 3 * 288);
}

TEST(TensorFormula, GatheringAgainInBackwardAddsTwoPassesPerLayer) {
  runtime::TensorTrafficShape shape{2, 4, 8, 3, 4, true, 2};
  shape.recompute_gather = true;
  EXPECT_DOUBLE_EQ(runtime::tensor_layer_bytes_sent(shape), 10 * 96.0);
  shape.sequence_parallel = false;  // nothing to gather again
  EXPECT_DOUBLE_EQ(runtime::tensor_layer_bytes_sent(shape), 8 * 96.0);
}

TEST(TensorFormula, VocabularyParallelBytesByHand) {
  // b s = 8 tokens, h = 8, fp16, t = 4: a ring pass of b s h is 3/4 x 128 = 96 bytes.
  runtime::TensorTrafficShape shape{2, 4, 8, 3, 4, false, 2};
  shape.vocabulary_parallel = true;
  // The embedding's and the head's all-reduces (4 passes), the loss's float32 all-gather of 8
  // numbers (3 x 32 bytes) and two all-reduces of them (2 x 2 x 3/4 x 32).
  EXPECT_DOUBLE_EQ(runtime::tensor_iteration_bytes_sent(shape), 3 * 768.0 + 384 + 96 + 96);
  // Sequence parallelism: the same 4 passes replace the ends; the final norm's gradient joins
  // the 6 blocks' (7 x 2 x 3/4 x 32 bytes).
  shape.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(runtime::tensor_iteration_bytes_sent(shape), 3 * 768.0 + 384 + 192 + 336);
}

}  // namespace
