// The signatures of the operators of a transformer over activations [batch, tokens, features]
// (dimensions 0, 1, 2), as Megatron-LM and HiDup split them. Each builder returns the ways one
// kind of operator can run over `ranks`; a way is offered only where its dimension divides.
#pragma once

#include <vector>

#include "planner/spmd/operator_graph.h"

namespace harness::spmd {

inline constexpr int kBatchDim = 0, kTokenDim = 1, kFeatureDim = 2;

// Which of an operator's activation dimensions divide over the ranks.
struct Divisible {
  bool batch = false;
  bool tokens = false;
  bool features = false;  // the split dimension of a column/row pair, heads, experts, vocabulary
};

// What every operator of a kind shares: its inputs, whether its first input carries a
// gradient (token ids do not), its parameter bytes.
struct OperatorShape {
  int arity = 1;
  bool first_input_has_gradient = true;
  double parameter_bytes = 0;
};

// Every rank runs its own batch ("data") or token ("sequence") shard with every weight, whose
// gradients the ranks sum; and "replicated", everything whole everywhere.
std::vector<Signature> token_signatures(const OperatorShape& shape, int ranks,
                                        const Divisible& divisible);
Signature replicated_signature(const OperatorShape& shape);

// Features split on the way in and out (an elementwise operator; attention over a shard of its
// heads): "features".
Signature feature_signature(const OperatorShape& shape, int ranks, SignatureKind kind);

// Megatron's pair: "column" takes its input whole and leaves its outputs' features split, its
// input's gradient a partial sum; "row" takes split features and leaves a partial sum.
Signature column_signature(const OperatorShape& shape, int ranks);
Signature row_signature(const OperatorShape& shape, int ranks);

// Partial sums added as they are (a residual join of two row outputs): "partial".
Signature partial_signature(const OperatorShape& shape);

// Signatures of each kind, the union of the above its operator allows.
std::vector<Signature> linear_signatures(const OperatorShape& shape, int ranks,
                                         const Divisible& divisible, bool splits_output,
                                         bool splits_input);
std::vector<Signature> elementwise_signatures(const OperatorShape& shape, int ranks,
                                              const Divisible& divisible);
std::vector<Signature> residual_signatures(int ranks, const Divisible& divisible);
std::vector<Signature> norm_signatures(const OperatorShape& shape, int ranks,
                                       const Divisible& divisible);
std::vector<Signature> attention_signatures(int ranks, const Divisible& divisible);
// Token ids [batch, tokens] into a table of `vocabulary` rows: also split by rows ("vocab":
// each rank looks up its rows, a partial sum) or by features ("features").
std::vector<Signature> embedding_signatures(const OperatorShape& shape, int ranks,
                                            const Divisible& divisible, bool vocabulary_divides);
// The loss over logits; split over the vocabulary ("vocab"), its softmax gathers every rank's
// largest logit of each token and sums two all-reduces of `token_bytes` (one float a token).
std::vector<Signature> loss_signatures(int ranks, const Divisible& divisible, double token_bytes);
// A mixture of experts: a batch shard ("data"), "experts" (each rank holds experts/ranks of
// them; tokens travel by all-to-all, `dispatch_bytes` one rank's dispatched buffer, 4 calls an
// iteration: dispatch and combine, forward and backward), "replicated" and "column" (every
// expert's hidden layer split, the router whole); no token shard, since tokens are routed in
// one capacity group per batch shard.
struct MixtureShape {
  OperatorShape operator_shape;
  double router_bytes = 0;
  double dispatch_bytes = 0;
  bool experts_divide = false;
  bool hidden_divides = false;
};
std::vector<Signature> mixture_signatures(const MixtureShape& shape, int ranks,
                                          const Divisible& divisible);
// The source of token ids: sharded by batch or tokens, or whole; no gradient.
std::vector<Signature> token_source_signatures(int ranks, const Divisible& divisible);

}  // namespace harness::spmd
