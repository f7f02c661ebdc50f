// Megatron-LM's vocabulary-parallel embedding and cross entropy (Shoeybi et al., 2019, section
// 3; torch's `loss_parallel`): each rank of a group holds the rows [rank x V / n, ...) of the
// token table, or of the head's weight, so that no rank holds a whole vocabulary's logits.
// Shared by tensor parallelism (runtime/parallel/tensor_region.h) and searched SPMD strategies
// (runtime/parallel/spmd_transformer.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "runtime/comm/communicator.h"
#include "runtime/protocol/trace_recorder.h"

namespace runtime {

// Token ids looked up in this rank's rows of the table, [first, first + rows) with first =
// rank x rows: ids outside them give zeros, so the result is a partial sum over the group.
at::Tensor vocabulary_lookup(const Communicator& group, const at::Tensor& ids,
                             const at::Tensor& table);

// The cross entropy of `targets` (token ids, the logits' leading shape) under logits of which
// this rank holds the vocabulary's columns [rank x width, ...), summed over the tokens and
// divided by `total_tokens`; every rank gets the whole value. Forward: an all-gather of each
// token's largest local logit and two all-reduces of one number a token (the sum of
// exponentials, the target's logit from the rank that holds it); backward: none, each rank's
// gradient is its columns' softmax less the target's one-hot. Computed in float32 at least
// (bfloat16 logits are widened, as autocast widens torch's cross entropy).
// The collectives are recorded in `trace` where one is given, in the system's `lane` ("tensor
// all-gather").
at::Tensor vocabulary_cross_entropy(Communicator& group, const at::Tensor& logits,
                                    const at::Tensor& targets, double total_tokens,
                                    TraceRecorder* trace = nullptr,
                                    const std::string& lane = "spmd");

}  // namespace runtime
