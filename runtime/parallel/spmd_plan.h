// A searched SPMD strategy as a rank reads it: spmd_plan.json's operators (planner/README.md,
// `harness spmd --out`), each with its signature and every form the search chose, in the order
// the rank runs them. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/tensor_form.h"

namespace runtime {

struct SpmdInput {
  std::string from;  // the producing operator
  harness::spmd::TensorForm form;
  std::optional<harness::spmd::TensorForm> grad;  // the form its gradient is handed back in
};

struct SpmdStep {
  std::string name;       // "layers.0.qkv"
  std::string kind;       // "linear", "attention", ...
  std::string signature;  // "column", "data", ...
  std::vector<SpmdInput> inputs;
  harness::spmd::TensorForm output;
  std::optional<harness::spmd::TensorForm> output_grad;
};

// The plan's steps, with every input naming an earlier step. Throws std::invalid_argument
// naming the operator and key where the document is not such a plan.
std::vector<SpmdStep> read_spmd_steps(const nlohmann::json& plan);

// Whether the step's weights are whole on every rank with their gradients summed over it
// (the batch or token shards of "data" and "sequence").
bool sums_weight_gradients(const SpmdStep& step);

}  // namespace runtime
