// What a strategy costs, HiDup's model with the harness's measured inputs: an operator's FLOPs
// over a rank's FLOP/s (its share of them; backward twice forward), or its signature's time
// as measured where the graph carries one (Signature::measured_compute_s) with the optimizer's
// step over the parameters a rank holds, every collective its
// fitted latency plus its bytes times the bus factor over the fitted bus bandwidth (comm.json),
// replicated weights' gradients summed in DDP's buckets. Nothing overlaps: each collective is
// on the critical path, as the harness's blocking tensor-parallel collectives are. The cost of
// a strategy is a sum of one term per operator and one per edge, which is what lets a dynamic
// program over the graph's cuts find its exact minimum (strategy_search.h).
#pragma once

#include <array>

#include "planner/spmd/operator_graph.h"

namespace harness::spmd {

struct CollectiveFit {
  double latency_s = 0;
  double bus_bytes_per_s = 0;
};

struct SpmdCosts {
  double flops_per_s = 0;        // one rank's
  double backward_factor = 2.0;  // backward FLOPs over forward
  // Indexed by Collective (kNone unused).
  std::array<CollectiveFit, 5> fits{};
  // DDP's bucket: one all-reduce latency per this many gradient bytes.
  double gradient_bucket_bytes = 25.0 * (1 << 20);
  double bytes_per_parameter_state = 4.0;  // AdamW keeps weight, gradient, m, v: x4 in memory
  // The optimizer's step, per byte of parameters a rank holds, where it was measured with the
  // operators' times (0: not priced, as under FLOPs).
  double step_seconds_per_parameter_byte = 0;
};

// Latency + buffer x bus factor / bus bandwidth over `ranks` (0 for kNone or one rank).
double collective_seconds(const SpmdCosts& costs, Collective collective, double buffer_bytes,
                          int ranks);

// One operator under one signature: its compute, its inner collectives, its gradient sum.
struct OperatorCost {
  double compute_s = 0;
  double communication_s = 0;
  double total() const { return compute_s + communication_s; }
};
OperatorCost operator_cost(const SpmdCosts& costs, int ranks, const Operator& op,
                           const Signature& signature);

// Resharding the producer's output into input `slot` of the consumer, forward, and the
// consumer's gradient back into the form the producer needs, backward.
double edge_seconds(const SpmdCosts& costs, int ranks, const Operator& producer,
                    const Signature& produced, const Signature& consumed, size_t slot);

// A whole strategy: compute, communication, and what one rank holds (parameters with their
// AdamW state, and every output kept for the backward pass).
struct StrategyCost {
  double compute_s = 0;
  double communication_s = 0;
  double memory_bytes = 0;
  double seconds() const { return compute_s + communication_s; }
};
StrategyCost strategy_cost(const OperatorGraph& graph, const SpmdCosts& costs,
                           const Strategy& strategy);

// The bytes of an output one rank holds in `form`.
double held_bytes(double tensor_bytes, TensorForm form, int ranks);

}  // namespace harness::spmd
