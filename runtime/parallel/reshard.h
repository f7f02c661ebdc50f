// A tensor moved from one SPMD form to another over a group of ranks (common/tensor_form.h), as
// an autograd operation: forward the collective that changes its form, backward the one that
// brings its gradient from the form the consumer hands back into the form the producer needs.
// What a searched strategy (planner/spmd) inserts between two operators; the forms are read
// from its plan, never guessed.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>

#include "common/tensor_form.h"
#include "runtime/comm/communicator.h"
#include "runtime/protocol/trace_recorder.h"

namespace runtime {

using harness::spmd::TensorForm;

// `tensor` in form `from` as form `to` on this rank of `group`, no autograd: sharded to
// replicated an all-gather along the dimension, partial to replicated an all-reduce, partial to
// sharded a reduce-scatter, sharded on one dimension to another an all-to-all; replicated to
// sharded this rank's slice; to partial, rank 0 keeps the value (a shard's placed in zeros) and
// the others hold zeros. Dimensions must divide by the group's size. A collective is recorded in
// `trace` where one is given and enabled, named in the system's `lane` ("spmd all-gather"), with
// its bytes.
at::Tensor change_form(Communicator& group, const at::Tensor& tensor, TensorForm from,
                       TensorForm to, TraceRecorder* trace = nullptr,
                       const std::string& lane = "spmd");

// change_form forward; backward the gradient from `grad_from` into `grad_to` (none where either
// is unset: no gradient flows, as into token ids). The group and the trace must outlive the
// graph.
at::Tensor reshard(Communicator& group, const at::Tensor& tensor, TensorForm from, TensorForm to,
                   std::optional<TensorForm> grad_from, std::optional<TensorForm> grad_to,
                   TraceRecorder* trace = nullptr, const std::string& lane = "spmd");

}  // namespace runtime
