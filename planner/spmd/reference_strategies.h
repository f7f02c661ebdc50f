// The strategies the harness's own systems run, expressed in the search's terms, so that a plan
// says what the searched strategy gains over each: DDP ("data": every operator on its batch
// shard), Megatron's tensor parallelism as `kind: tensor_parallel` runs it ("tensor": column and
// row projections, attention by heads, norms, residuals, embeddings and the head whole) and
// expert parallelism ("experts": the mixtures' experts spread, the rest as DDP).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/spmd/operator_graph.h"

namespace harness::spmd {

enum class ReferenceSystem { kData, kTensor, kExperts };

const char* reference_name(ReferenceSystem system);

// The system's strategy on `graph`, or nullopt where an operator offers none of the signatures
// the system runs it with (a batch the ranks do not divide; experts on a model without
// mixtures).
std::optional<Strategy> reference_strategy(const OperatorGraph& graph, ReferenceSystem system);

}  // namespace harness::spmd
