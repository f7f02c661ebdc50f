// The words a searched SPMD plan is written in (spmd_plan.json): what kind of operator each is and
// which signature it runs under. The search (planner/spmd) writes them, the rank that runs the plan
// (runtime/parallel/spmd_plan.h) reads them, each through this one table; a word outside it is
// refused where the plan is read.
#pragma once

#include <optional>
#include <string>

namespace harness::spmd {

enum class OperatorKind {
  kTokens,      // the token ids
  kEmbedding,   // a lookup table (and positions)
  kNorm,        // RMSNorm or LayerNorm
  kLinear,      // a projection
  kAttention,   // the attention core
  kActivation,  // an elementwise nonlinearity (SwiGLU, GELU, tanh)
  kAdd,         // a residual join
  kExperts,     // a mixture of experts with its router
  kLoss,
};

enum class SignatureKind {
  kData,        // a batch shard, weights whole and their gradients summed
  kSequence,    // a token shard, likewise
  kReplicated,  // everything whole everywhere
  kColumn,      // Megatron's column split: input whole, output features split
  kRow,         // Megatron's row split: input features split, output a partial sum
  kFeatures,    // features split in and out
  kHeads,       // attention over a shard of the heads
  kPartial,     // partial sums added as they are
  kVocab,       // an embedding's or a loss's vocabulary split
  kExperts,     // a mixture's experts spread over the ranks, tokens by batch shard
};

// "tokens", "embedding", ...; "data", "sequence", "replicated", "column", ...
const char* to_text(OperatorKind kind);
const char* to_text(SignatureKind kind);
std::optional<OperatorKind> parse_operator_kind(const std::string& text);
std::optional<SignatureKind> parse_signature_kind(const std::string& text);

// Whether a signature keeps its weights whole on a shard of the tokens, their gradients summed
// over the ranks.
bool sums_weight_gradients(SignatureKind kind);

}  // namespace harness::spmd
