// Full activation checkpointing (runtime/models/activation_checkpoint.h) and selective
// recomputation (runtime/models/attention_core.h): recomputing every transformer block, or
// every attention core, in backward gives gradients bit-identical to keeping the activations,
// in fp32 and under bf16 autocast, for llama and bert; only blocks are recomputed (a mixture-of-
// experts block and a convolutional model's layers are not), and a forward without gradients
// records nothing.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "runtime/models/model_catalog.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/precision.h"
#include "runtime/models/synthetic_batch.h"

namespace {

// What backward recomputes: nothing, every block ("full"), blocks 0, 2, ... ("full every 2")
// or every attention core ("selective").
runtime::ModelOptions block_options(const std::string& name, const std::string& recompute) {
  runtime::ModelOptions options;
  options.input_shape = {16};
  options.depth = 3;
  options.width = 64;
  if (name == "llama") options.decoder = {4, 2, 97};
  options.activation_checkpointing = recompute.rfind("full", 0) == 0;
  options.recompute_every = recompute == "full every 2" ? 2 : 1;
  options.selective_recomputation = recompute == "selective";
  return options;
}

// Every parameter's gradient after one backward of the model's training loss.
std::vector<torch::Tensor> gradients_of(const std::string& name, const std::string& recompute,
                                        runtime::Precision precision) {
  torch::manual_seed(7);
  const auto options = block_options(name, recompute);
  const auto model = runtime::make_model(name, options);
  torch::manual_seed(8);
  const std::string loss = name == "llama" ? "cross_entropy" : "mse";
  const auto batch = runtime::make_synthetic_batch(*model, options, 4, loss);
  torch::Tensor value;
  {
    // Forward under autocast, backward after it, as a rank trains: the recomputation must
    // enter autocast itself.
    const runtime::PrecisionScope scope(precision, torch::kCPU);
    value = runtime::training_loss(loss, model->forward(batch.input), batch.target);
  }
  value.backward();
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.grad().clone());
  return out;
}

void expect_bit_identical(const std::string& name, runtime::Precision precision) {
  const auto kept = gradients_of(name, "none", precision);
  for (const std::string recompute : {"full", "full every 2", "selective"}) {
    const auto recomputed = gradients_of(name, recompute, precision);
    ASSERT_EQ(kept.size(), recomputed.size());
    for (size_t i = 0; i < kept.size(); ++i) {
      EXPECT_TRUE(torch::equal(kept[i], recomputed[i]))
          << name << " parameter " << i << " (" << recompute << ")";
    }
  }
}

TEST(ActivationCheckpointing, LlamaGradientsAreBitIdentical) {
  expect_bit_identical("llama", runtime::Precision::kFp32);
}

TEST(ActivationCheckpointing, BertGradientsAreBitIdentical) {
  expect_bit_identical("bert", runtime::Precision::kFp32);
}

TEST(ActivationCheckpointing, AutocastIsReenteredForTheRecomputation) {
  expect_bit_identical("llama", runtime::Precision::kBf16);
}

// What autograd keeps: a checkpointed block's graph holds one node (the recomputation), a kept
// block's the whole chain of its operations.
int64_t graph_nodes(const torch::Tensor& output) {
  std::vector<torch::autograd::Node*> stack{output.grad_fn().get()};
  std::set<torch::autograd::Node*> seen;
  while (!stack.empty()) {
    torch::autograd::Node* node = stack.back();
    stack.pop_back();
    if (node == nullptr || !seen.insert(node).second) continue;
    for (const auto& edge : node->next_edges()) stack.push_back(edge.function.get());
  }
  return static_cast<int64_t>(seen.size());
}

TEST(ActivationCheckpointing, OnlyBlocksAreRecomputedAndOnlyWithGradients) {
  torch::manual_seed(7);
  auto model = runtime::make_model("llama", block_options("llama", "full"));
  const auto tokens = torch::randint(97, {2, 16}, torch::kLong);
  const int64_t recomputed = graph_nodes(model->forward(tokens));
  model->set_activation_checkpointing(false);
  const int64_t kept = graph_nodes(model->forward(tokens));
  EXPECT_LT(recomputed * 4, kept);  // 3 blocks of dozens of operations, one node each
  // Selective: each core's operations -- at least its 2 products, scale, mask and softmax --
  // become one node, in each of the 3 blocks.
  torch::manual_seed(7);
  const auto selective = runtime::make_model("llama", block_options("llama", "selective"));
  EXPECT_GE(kept - graph_nodes(selective->forward(tokens)), 3 * (5 - 1));
  EXPECT_TRUE(model->has_recomputable_layers());
  EXPECT_FALSE(runtime::make_model("mlp", {{16}, 4})->has_recomputable_layers());
  // bert_moe: the blocks with a mixture keep their activations (routing state, balancing loss).
  runtime::ModelOptions moe = block_options("bert_moe", "full");
  moe.depth = 2;  // block 1 a mixture, block 0 not
  const auto mixture = runtime::make_model("bert_moe", moe);
  EXPECT_FALSE(mixture->layers()[2].recomputable);
  EXPECT_TRUE(mixture->layers()[1].recomputable);
  model->set_activation_checkpointing(true);
  const torch::NoGradGuard no_grad;
  EXPECT_FALSE(model->forward(tokens).requires_grad());
}

// The harness counts recomputed FLOPs by the catalog's torch-free rule: it names the layers the
// zoo marks recomputable.
TEST(ActivationCheckpointing, TheCatalogsRuleNamesTheZoosRecomputedLayers) {
  for (const std::string name : {"llama", "bert", "bert_moe"}) {
    for (const int64_t every : {1, 2}) {
      runtime::ModelOptions options = block_options(name, "full");
      options.recompute_every = every;
      const auto model = runtime::make_model(name, options);
      std::vector<bool> zoo;
      for (const auto& layer : model->layers()) zoo.push_back(layer.recomputed);
      EXPECT_EQ(runtime::recomputed_layers(name, options.depth, options.moe, every), zoo)
          << name << " every " << every;
    }
  }
  // llama's 3 blocks, every second: blocks 0 and 2 (chain layers 1 and 3).
  EXPECT_EQ(runtime::recomputed_layers("llama", 3, {}, 2),
            (std::vector<bool>{false, true, false, true, false, false}));
  EXPECT_TRUE(runtime::recomputed_layers("resnet18", 0, {}).empty());
}

}  // namespace
