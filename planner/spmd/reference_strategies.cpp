#include "planner/spmd/reference_strategies.h"

#include <algorithm>

namespace harness::spmd {
namespace {

using Names = std::vector<std::string>;

// Megatron's split as the harness makes it: inside the blocks ("layers.0.qkv"); the embeddings,
// the pooler and its tanh, the classifier and the vocabulary head stay whole.
bool inside_a_block(const Operator& op) { return op.name.find('.') != std::string::npos; }

// The signatures the system runs an operator with, in order of preference.
Names preferred(ReferenceSystem system, const Operator& op) {
  switch (system) {
    case ReferenceSystem::kData:
      return {"data"};
    case ReferenceSystem::kExperts:
      return op.kind == "experts" ? Names{"experts"} : Names{"data"};
    case ReferenceSystem::kTensor:
      break;
  }
  if (!inside_a_block(op)) return {"replicated"};
  if (op.kind == "attention") return {"heads"};
  if (op.kind == "activation") return {"features"};
  if (op.kind == "linear") return {"column", "row"};
  return {"replicated"};
}

std::optional<int> first_offered(const Operator& op, const Names& names) {
  for (const std::string& name : names) {
    const auto found = std::find_if(op.signatures.begin(), op.signatures.end(),
                                    [&](const Signature& s) { return s.name == name; });
    if (found != op.signatures.end()) return static_cast<int>(found - op.signatures.begin());
  }
  return std::nullopt;
}

}  // namespace

const char* reference_name(ReferenceSystem system) {
  switch (system) {
    case ReferenceSystem::kData:
      return "data";
    case ReferenceSystem::kTensor:
      return "tensor";
    case ReferenceSystem::kExperts:
      break;
  }
  return "experts";
}

std::optional<Strategy> reference_strategy(const OperatorGraph& graph, ReferenceSystem system) {
  const bool has_experts = std::any_of(graph.operators.begin(), graph.operators.end(),
                                       [](const Operator& op) { return op.kind == "experts"; });
  // The harness splits llama's and bert's layers over a tensor axis, not bert_moe's.
  if (has_experts != (system == ReferenceSystem::kExperts) && system != ReferenceSystem::kData) {
    return std::nullopt;
  }
  Strategy strategy;
  for (const Operator& op : graph.operators) {
    const std::optional<int> chosen = first_offered(op, preferred(system, op));
    if (!chosen) return std::nullopt;
    strategy.push_back(*chosen);
  }
  return strategy;
}

}  // namespace harness::spmd
