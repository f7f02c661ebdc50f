// A searched SPMD strategy as a rank reads it: spmd_plan.json's operators (planner/README.md,
// `harness spmd --out`), each with its signature and every form the search chose, in the order
// the rank runs them. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/spmd_vocabulary.h"
#include "common/tensor_form.h"

namespace runtime {

struct SpmdInput {
  std::string from;  // the producing operator
  harness::spmd::TensorForm form;
  std::optional<harness::spmd::TensorForm> grad;  // the form its gradient is handed back in
};

struct SpmdStep {
  std::string name;  // "layers.0.qkv"
  harness::spmd::OperatorKind kind = harness::spmd::OperatorKind::kLinear;
  harness::spmd::SignatureKind signature = harness::spmd::SignatureKind::kReplicated;
  std::vector<SpmdInput> inputs;
  harness::spmd::TensorForm output;
  std::optional<harness::spmd::TensorForm> output_grad;
};

// The plan's steps, with every input naming an earlier step. Throws std::invalid_argument
// naming the operator and key where the document is not such a plan: an unknown kind or
// signature (common/spmd_vocabulary.h), a form, an input.
std::vector<SpmdStep> read_spmd_steps(const nlohmann::json& plan);

}  // namespace runtime
