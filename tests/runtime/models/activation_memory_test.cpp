// Activation memory of one transformer layer, measured by the allocator, against Korthikanti et
// al.'s Table 2 (2022), per layer in 2-byte units of s b h: 34 + 5as/h without parallelism,
// 10 + 24/t + 5as/(ht) with tensor parallelism, 34/t + 5as/(ht) with sequence parallelism too,
// 34/t recomputing the attention core (selective), 2 recomputing the layer (full). The zoo's
// BERT block is their GPT layer (LayerNorms, GELU feed-forward of 4h) without dropout, in fp32:
// each term is twice as many bytes, and the dropout terms are gone -- the attention's and the
// feed-forward's masks (sbh each) and the attention's dropped probabilities and their mask
// (3as^2b), so 32 + 2as/h. Under sequence parallelism this runtime keeps the all-gathered
// inputs of q, k, v and of the feed-forward whole (2 + 2, where Megatron gathers them again in
// backward): 4 + 28/t + 2as/(ht); gathering them again in backward, as Megatron does
// (recompute_gather), keeps their shards: 32/t + 2as/(ht). The measurement counts the block's
// output in place of its input (the formula's q, k, v input, which the next block keeps). A
// tensor-parallel slice is measured alone, its collectives answered by a peerless group
// (runtime/parallel/peerless_group.h).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <c10/util/ThreadLocalDebugInfo.h>

#include "runtime/device/allocation_tracker.h"
#include "runtime/models/model_zoo.h"
#include "runtime/parallel/peerless_group.h"
#include "runtime/parallel/tensor_region.h"

namespace {

constexpr int64_t kBatch = 2, kTokens = 64, kWidth = 256, kHeads = 4;  // bert: heads of 64

struct MemoryCase {
  int tensor = 1;
  bool sequence_parallel = false;
  std::string recompute = "none";  // none | selective | full
  bool recompute_gather = false;   // sequence parallelism keeping only its token shards
};

// Korthikanti's terms without dropout, in 2-byte units of s b h, as the header derives them.
double formula_units(const MemoryCase& c) {
  const double t = c.tensor, as_h = static_cast<double>(kHeads * kTokens) / kWidth;
  if (c.recompute == "full") return 2;
  const double softmax = c.recompute == "selective" ? 0 : 2 * as_h / t;
  // The block's output shard, held here as the next block's input, is not what the next block
  // keeps under sequence parallelism (its all-gathered copy, counted in its 4): 2/t on top.
  if (c.sequence_parallel && c.recompute_gather) return 32 / t + softmax + 2 / t;
  if (c.sequence_parallel) return 4 + 28 / t + softmax + 2 / t;
  return 8 + 24 / t + softmax;
}

// Bytes the first encoder block's forward leaves allocated: what its graph keeps for backward
// and its output (the next block keeps that as its input, as the formula counts its own).
int64_t bytes_held_by_block(const MemoryCase& c) {
  runtime::ModelOptions options;
  options.input_shape = {kTokens};
  options.depth = 2;
  options.width = kWidth;
  options.tensor_shards = c.tensor;
  options.sequence_parallel = c.sequence_parallel;
  options.recompute_gather = c.recompute_gather;
  options.activation_checkpointing = c.recompute == "full";
  options.selective_recomputation = c.recompute == "selective";
  torch::manual_seed(3);
  const auto model = runtime::make_model("bert", options);
  runtime::PeerlessGroup group(0, c.tensor);
  if (runtime::TensorRegion* region = model->tensor_region()) region->group = &group;
  const torch::Tensor input = torch::randn({kBatch, kTokens, kWidth}, torch::requires_grad());
  auto tracker = std::make_shared<runtime::AllocationTracker>(c10::DeviceType::CPU);
  torch::Tensor output;
  {
    const c10::DebugInfoGuard track(c10::DebugInfoKind::PROFILER_STATE, tracker);
    output = model->forward_layers(input, 1, 1);
  }
  EXPECT_TRUE(output.requires_grad());
  return tracker->current();
}

void expect_near_formula(const MemoryCase& c) {
  const double sbh_bytes = 2.0 * kBatch * kTokens * kWidth;  // a 2-byte unit, in fp32
  const double measured = static_cast<double>(bytes_held_by_block(c));
  const double formula = formula_units(c) * sbh_bytes;
  // Within 1%: the LayerNorms' means and deviations (2 s b floats each) are not terms.
  EXPECT_NEAR(measured / formula, 1.0, 0.01)
      << "tensor " << c.tensor << (c.sequence_parallel ? " sp" : "") << " " << c.recompute
      << ": measured " << measured / sbh_bytes << " sbh units, formula " << formula_units(c);
}

TEST(ActivationMemory, OneProcessHoldsKorthikantisTermsWithoutDropout) {
  expect_near_formula({1, false, "none"});
}

TEST(ActivationMemory, TensorParallelSlicesHoldTheirShareOfTheSplitTerms) {
  expect_near_formula({2, false, "none"});
  expect_near_formula({4, false, "none"});
}

TEST(ActivationMemory, SequenceParallelShardsTheNormsInputs) {
  expect_near_formula({2, true, "none"});
}

TEST(ActivationMemory, GatheringAgainInBackwardKeepsOnlyTheShards) {
  expect_near_formula({2, true, "none", true});
  expect_near_formula({4, true, "none", true});
}

TEST(ActivationMemory, RecomputationDropsTheCoreOrTheWholeLayer) {
  expect_near_formula({1, false, "selective"});
  expect_near_formula({2, false, "selective"});
  expect_near_formula({1, false, "full"});
}

}  // namespace
