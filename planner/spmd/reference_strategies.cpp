#include "planner/spmd/reference_strategies.h"

#include <algorithm>

namespace harness::spmd {
namespace {

using Kinds = std::vector<SignatureKind>;

// Megatron's split as the harness makes it: inside the blocks ("layers.0.qkv"); the embeddings,
// the pooler and its tanh, the classifier and the vocabulary head stay whole.
bool inside_a_block(const Operator& op) {
  return op.name.starts_with("layers.") || op.name.starts_with("encoder.layer.");
}

// The signatures the system runs an operator with, in order of preference.
Kinds preferred(ReferenceSystem system, const Operator& op) {
  switch (system) {
    case ReferenceSystem::kData:
      return {SignatureKind::kData};
    case ReferenceSystem::kExperts:
      return {op.kind == OperatorKind::kExperts ? SignatureKind::kExperts : SignatureKind::kData};
    case ReferenceSystem::kTensor:
      break;
  }
  if (!inside_a_block(op)) return {SignatureKind::kReplicated};
  if (op.kind == OperatorKind::kAttention) return {SignatureKind::kHeads};
  if (op.kind == OperatorKind::kActivation) return {SignatureKind::kFeatures};
  if (op.kind == OperatorKind::kLinear) return {SignatureKind::kColumn, SignatureKind::kRow};
  return {SignatureKind::kReplicated};
}

std::optional<int> first_offered(const Operator& op, const Kinds& kinds) {
  for (const SignatureKind kind : kinds) {
    const auto found = std::find_if(op.signatures.begin(), op.signatures.end(),
                                    [&](const Signature& s) { return s.kind == kind; });
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
  const bool has_experts =
      std::any_of(graph.operators.begin(), graph.operators.end(),
                  [](const Operator& op) { return op.kind == OperatorKind::kExperts; });
  if (has_experts != (system == ReferenceSystem::kExperts) && system != ReferenceSystem::kData) {
    return std::nullopt;
  }
  // The harness splits llama's and bert's layers over a tensor axis, not bert_moe's or ViT's.
  if (!graph.megatron_runs && system == ReferenceSystem::kTensor) return std::nullopt;
  Strategy strategy;
  for (const Operator& op : graph.operators) {
    const std::optional<int> chosen = first_offered(op, preferred(system, op));
    if (!chosen) return std::nullopt;
    strategy.push_back(*chosen);
  }
  return strategy;
}

}  // namespace harness::spmd
