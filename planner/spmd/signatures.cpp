#include "planner/spmd/signatures.h"

namespace harness::spmd {
namespace {

// A signature whose inputs, their gradients, its output and the output's gradient all take one
// form; the first input without a gradient where the shape says so.
Signature uniform(const OperatorShape& shape, SignatureKind kind, TensorForm form) {
  Signature signature;
  signature.kind = kind;
  signature.inputs.assign(shape.arity, form);
  signature.input_grads.assign(shape.arity, form);
  if (!shape.first_input_has_gradient) signature.input_grads[0] = std::nullopt;
  signature.output = form;
  signature.output_grad = form;
  return signature;
}

double share(int ranks) { return 1.0 / ranks; }

}  // namespace

std::vector<Signature> token_signatures(const OperatorShape& shape, int ranks,
                                        const Divisible& divisible) {
  std::vector<Signature> signatures;
  const std::pair<bool, int> splits[] = {{divisible.batch, kBatchDim},
                                         {divisible.tokens, kTokenDim}};
  for (const auto& [divides, dim] : splits) {
    if (!divides) continue;
    Signature signature = uniform(
        shape, dim == kBatchDim ? SignatureKind::kData : SignatureKind::kSequence, sharded(dim));
    signature.compute_share = share(ranks);
    signature.synced_gradient_bytes = shape.parameter_bytes;
    signatures.push_back(signature);
  }
  return signatures;
}

Signature replicated_signature(const OperatorShape& shape) {
  return uniform(shape, SignatureKind::kReplicated, kReplicated);
}

Signature feature_signature(const OperatorShape& shape, int ranks, SignatureKind kind) {
  Signature signature = uniform(shape, kind, sharded(kFeatureDim));
  signature.compute_share = share(ranks);
  signature.parameter_share = share(ranks);
  return signature;
}

Signature column_signature(const OperatorShape& shape, int ranks) {
  Signature signature = uniform(shape, SignatureKind::kColumn, kReplicated);
  if (shape.first_input_has_gradient) signature.input_grads[0] = kPartial;
  signature.output = sharded(kFeatureDim);
  signature.output_grad = sharded(kFeatureDim);
  signature.compute_share = share(ranks);
  signature.parameter_share = share(ranks);
  return signature;
}

Signature row_signature(const OperatorShape& shape, int ranks) {
  Signature signature = uniform(shape, SignatureKind::kRow, sharded(kFeatureDim));
  signature.output = kPartial;
  signature.output_grad = kReplicated;
  signature.compute_share = share(ranks);
  signature.parameter_share = share(ranks);
  return signature;
}

Signature partial_signature(const OperatorShape& shape) {
  Signature signature = uniform(shape, SignatureKind::kPartial, kReplicated);
  signature.inputs.assign(shape.arity, kPartial);
  signature.output = kPartial;
  return signature;
}

std::vector<Signature> linear_signatures(const OperatorShape& shape, int ranks,
                                         const Divisible& divisible, bool splits_output,
                                         bool splits_input) {
  std::vector<Signature> signatures = token_signatures(shape, ranks, divisible);
  signatures.push_back(replicated_signature(shape));
  if (splits_output) signatures.push_back(column_signature(shape, ranks));
  if (splits_input) signatures.push_back(row_signature(shape, ranks));
  return signatures;
}

std::vector<Signature> elementwise_signatures(const OperatorShape& shape, int ranks,
                                              const Divisible& divisible) {
  std::vector<Signature> signatures = token_signatures(shape, ranks, divisible);
  signatures.push_back(replicated_signature(shape));
  if (divisible.features)
    signatures.push_back(feature_signature(shape, ranks, SignatureKind::kFeatures));
  return signatures;
}

std::vector<Signature> residual_signatures(int ranks, const Divisible& divisible) {
  const OperatorShape shape{2, true, 0};
  std::vector<Signature> signatures = elementwise_signatures(shape, ranks, divisible);
  signatures.push_back(partial_signature(shape));
  return signatures;
}

std::vector<Signature> norm_signatures(const OperatorShape& shape, int ranks,
                                       const Divisible& divisible) {
  std::vector<Signature> signatures = token_signatures(shape, ranks, divisible);
  signatures.push_back(replicated_signature(shape));
  return signatures;
}

std::vector<Signature> attention_signatures(int ranks, const Divisible& divisible) {
  const OperatorShape shape{1, true, 0};
  // A token shard cannot attend to the others' keys: no "sequence" form.
  std::vector<Signature> signatures =
      token_signatures(shape, ranks, {divisible.batch, false, false});
  signatures.push_back(replicated_signature(shape));
  if (divisible.features)
    signatures.push_back(feature_signature(shape, ranks, SignatureKind::kHeads));
  return signatures;
}

std::vector<Signature> embedding_signatures(const OperatorShape& shape, int ranks,
                                            const Divisible& divisible, bool vocabulary_divides) {
  std::vector<Signature> signatures = token_signatures(shape, ranks, divisible);
  signatures.push_back(replicated_signature(shape));
  if (vocabulary_divides) {
    Signature vocab = column_signature(shape, ranks);
    vocab.kind = SignatureKind::kVocab;
    vocab.output = kPartial;
    vocab.output_grad = kReplicated;
    signatures.push_back(vocab);
  }
  if (divisible.features) signatures.push_back(column_signature(shape, ranks));
  return signatures;
}

std::vector<Signature> loss_signatures(int ranks, const Divisible& divisible, double token_bytes) {
  std::vector<Signature> signatures = elementwise_signatures({1, true, 0}, ranks, divisible);
  for (Signature& signature : signatures) {
    signature.output_grad = std::nullopt;
    if (signature.kind == SignatureKind::kFeatures) {
      signature.kind = SignatureKind::kVocab;
      signature.inner.push_back({Collective::kAllReduce, token_bytes, 2});
      signature.inner.push_back({Collective::kAllGather, token_bytes * ranks, 1});
    }
  }
  return signatures;
}

std::vector<Signature> mixture_signatures(const MixtureShape& shape, int ranks,
                                          const Divisible& divisible) {
  const OperatorShape& base = shape.operator_shape;
  // The router's capacity is counted per batch shard whatever the signature (GShard's groups):
  // a token shard would hold tokens of every group, so no "sequence" form.
  std::vector<Signature> signatures =
      token_signatures(base, ranks, {divisible.batch, false, false});
  // The router stays whole beside the experts' split.
  const double split_share =
      (shape.router_bytes + (base.parameter_bytes - shape.router_bytes) / ranks) /
      base.parameter_bytes;
  if (divisible.batch && shape.experts_divide) {
    Signature experts = signatures.front();
    experts.kind = SignatureKind::kExperts;
    experts.parameter_share = split_share;
    experts.synced_gradient_bytes = shape.router_bytes;
    experts.inner.push_back({Collective::kAllToAll, shape.dispatch_bytes, 4});
    signatures.push_back(experts);
  }
  signatures.push_back(replicated_signature(base));
  if (shape.hidden_divides) {
    // Every expert's hidden layer split; the gates weigh partial outputs, so the whole router's
    // gradient is a partial sum too.
    Signature column = column_signature(base, ranks);
    column.output = kPartial;
    column.output_grad = kReplicated;
    column.parameter_share = split_share;
    column.synced_gradient_bytes = shape.router_bytes;
    signatures.push_back(column);
  }
  return signatures;
}

std::vector<Signature> token_source_signatures(int ranks, const Divisible& divisible) {
  std::vector<Signature> signatures = token_signatures({0, true, 0}, ranks, divisible);
  signatures.push_back(replicated_signature({0, true, 0}));
  for (Signature& signature : signatures) signature.output_grad = std::nullopt;
  return signatures;
}

}  // namespace harness::spmd
