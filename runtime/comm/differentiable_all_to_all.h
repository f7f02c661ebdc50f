// All-to-all as an autograd operation: forward sends rows as the splits say; backward sends
// the rows' gradients back the way they came (the same all-to-all with the splits swapped).
// What expert parallelism's dispatch and combine are made of.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/protocol/trace_recorder.h"

namespace runtime {

// `input`'s rows: input_splits[r] for rank r, in rank order; the result: output_splits[s] rows
// from rank s, in rank order (Communicator::all_to_all). Blocks until they arrived. Half and
// bfloat16 rows travel as 2-byte integers (Gloo moves bytes, and reduces no bfloat16). With a
// trace, both directions are recorded as `name` (the backward's as "`name` backward"),
// category alltoall, with the bytes this rank sent and received.
at::Tensor all_to_all_with_grad(Communicator& group, const at::Tensor& input,
                                const std::vector<int64_t>& output_splits,
                                const std::vector<int64_t>& input_splits,
                                TraceRecorder* trace = nullptr, const std::string& name = "");

}  // namespace runtime
