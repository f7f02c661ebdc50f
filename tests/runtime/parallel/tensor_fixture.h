// The tensor-parallel tests' model, batch and reference, shared by the tests of the axis alone
// (tensor_parallel_test.cpp) and inside pipeline stages (tensor_pipeline_test.cpp): a small
// Llama-style decoder or BERT-style encoder drawn from one seed, its global batch, one
// process's parameters after kTensorSteps AdamW steps, and how a parameter's slices put
// together give the whole.
#pragma once

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/optim/optimizer.h"

namespace tensor_test {

using Parameters = std::map<std::string, torch::Tensor>;

inline constexpr int kTensorSteps = 10;
inline constexpr int64_t kTensorBatch = 4, kTokens = 8, kWidth = 64, kDepth = 2;

// llama: 8 heads of 8 over 4 key/value heads (grouped-query: each rank keeps whole groups at
// t = 4) and a vocabulary of 96 (which splits over 2 and 4); bert: 2 heads of 64 (its head
// width), a feed-forward of 512.
inline int64_t width_of(const std::string& model) { return model == "bert" ? 2 * kWidth : kWidth; }

inline runtime::ModelOptions decoder_options(int64_t shard = 0, int64_t shards = 1,
                                             bool sequence = false,
                                             const std::string& model = "llama") {
  runtime::ModelOptions options;
  options.input_shape = {kTokens};
  options.depth = kDepth;
  options.width = width_of(model);
  if (model == "llama") options.decoder = {8, 4, 96};
  options.tensor_shard = shard;
  options.tensor_shards = shards;
  options.sequence_parallel = sequence;
  return options;
}

inline runtime::WorkerOptimizer tensor_adamw() {
  return {"adamw", 0.01, 0.0, 0.9, 0.999, 1e-8, 0.01};
}

inline std::shared_ptr<runtime::ZooModel> seeded_decoder(const runtime::ModelOptions& options,
                                                         const std::string& model = "llama") {
  torch::manual_seed(11);
  return runtime::make_model(model, options);
}

inline std::string loss_of(const std::string& model) {
  return model == "llama" ? "cross_entropy" : "mse";
}

inline runtime::SyntheticBatch decoder_batch(const std::string& model = "llama") {
  const auto options = decoder_options(0, 1, false, model);
  const auto whole = seeded_decoder(options, model);
  torch::manual_seed(23);
  return runtime::make_synthetic_batch(*whole, options, kTensorBatch, loss_of(model));
}

inline Parameters named(const torch::nn::Module& model) {
  Parameters out;
  for (const auto& item : model.named_parameters()) out[item.key()] = item.value().detach();
  return out;
}

inline Parameters one_process_decoder(const std::string& name) {
  const auto model = seeded_decoder(decoder_options(0, 1, false, name), name);
  const auto batch = decoder_batch(name);
  auto optimizer = runtime::make_optimizer(tensor_adamw(), model->parameters());
  for (int step = 0; step < kTensorSteps; ++step) {
    optimizer->zero_grad();
    runtime::training_loss(loss_of(name), model->forward(batch.input), batch.target).backward();
    optimizer->step();
  }
  return named(*model);
}

inline std::unique_ptr<runtime::Communicator> group_of(const c10::intrusive_ptr<c10d::Store>& store,
                                                       const std::string& name, int rank,
                                                       int size) {
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>(name, store);
  return runtime::make_gloo_communicator(prefixed, rank, size, std::chrono::seconds(60));
}

inline bool ends_with(const std::string& name, const std::string& end) {
  return name.size() >= end.size() && name.compare(name.size() - end.size(), end.size(), end) == 0;
}

// How a parameter was split: llama's q, k, v, gate and up and bert's intermediate (weight and
// bias) by rows, o, down and bert's two row-parallel weights by columns; the rest whole.
inline int64_t split_dimension(const std::string& name) {
  for (const char* column :
       {"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "intermediate"}) {
    if (name.find(column) != std::string::npos) return 0;
  }
  for (const char* row : {"o_proj", "down_proj", "attention_output.weight", ".output.weight"}) {
    if (name.find(row) != std::string::npos) return 1;
  }
  return -1;
}

// The slices put together: bert's fused q, k, v by each of its three parts.
inline torch::Tensor whole_of(const std::string& name, const std::vector<torch::Tensor>& shards) {
  if (ends_with(name, "qkv.weight") || ends_with(name, "qkv.bias")) {
    std::vector<torch::Tensor> parts;
    for (int64_t part = 0; part < 3; ++part) {
      for (const auto& shard : shards) parts.push_back(shard.chunk(3, 0)[part]);
    }
    return torch::cat(parts, 0);
  }
  const int64_t dimension = split_dimension(name);
  return dimension < 0 ? shards[0] : torch::cat(shards, dimension);
}

}  // namespace tensor_test
