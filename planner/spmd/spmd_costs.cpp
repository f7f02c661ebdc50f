#include "planner/spmd/spmd_costs.h"

namespace harness::spmd {
namespace {

double bus_factor(Collective collective, int ranks) {
  const double n = ranks;
  return collective == Collective::kAllReduce ? 2.0 * (n - 1) / n : (n - 1) / n;
}

double gradient_sum_seconds(const SpmdCosts& costs, double bytes, int ranks) {
  if (bytes <= 0 || ranks < 2) return 0.0;
  const CollectiveFit& fit = costs.fits[static_cast<int>(Collective::kAllReduce)];
  const double buckets = bytes / costs.gradient_bucket_bytes;
  return buckets * fit.latency_s +
         bytes * bus_factor(Collective::kAllReduce, ranks) / fit.bus_bytes_per_s;
}

}  // namespace

double collective_seconds(const SpmdCosts& costs, Collective collective, double buffer_bytes,
                          int ranks) {
  if (collective == Collective::kNone || ranks < 2) return 0.0;
  const CollectiveFit& fit = costs.fits[static_cast<int>(collective)];
  return fit.latency_s + buffer_bytes * bus_factor(collective, ranks) / fit.bus_bytes_per_s;
}

OperatorCost operator_cost(const SpmdCosts& costs, int ranks, const Operator& op,
                           const Signature& signature) {
  OperatorCost cost;
  cost.compute_s =
      signature.measured_compute_s.value_or(op.forward_flops * signature.compute_share *
                                            (1.0 + costs.backward_factor) / costs.flops_per_s);
  cost.compute_s +=
      op.parameter_bytes * signature.parameter_share * costs.step_seconds_per_parameter_byte;
  for (const InnerCollective& inner : signature.inner) {
    cost.communication_s +=
        inner.calls * collective_seconds(costs, inner.collective, inner.buffer_bytes, ranks);
  }
  cost.communication_s += gradient_sum_seconds(costs, signature.synced_gradient_bytes, ranks);
  return cost;
}

double edge_seconds(const SpmdCosts& costs, int ranks, const Operator& producer,
                    const Signature& produced, const Signature& consumed, size_t slot) {
  const double bytes = producer.output_bytes;
  const Collective forward = resharding(produced.output, consumed.inputs[slot]);
  double seconds =
      collective_seconds(costs, forward, collective_buffer_bytes(forward, bytes, ranks), ranks);
  const auto& handed_back = consumed.input_grads[slot];
  if (produced.output_grad && handed_back) {
    const Collective backward = resharding(*handed_back, *produced.output_grad);
    seconds +=
        collective_seconds(costs, backward, collective_buffer_bytes(backward, bytes, ranks), ranks);
  }
  return seconds;
}

double held_bytes(double tensor_bytes, TensorForm form, int ranks) {
  return form.kind == FormKind::kSharded ? tensor_bytes / ranks : tensor_bytes;
}

StrategyCost strategy_cost(const OperatorGraph& graph, const SpmdCosts& costs,
                           const Strategy& strategy) {
  StrategyCost total;
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const Operator& op = graph.operators[i];
    const Signature& chosen = op.signatures.at(strategy.at(i));
    const OperatorCost own = operator_cost(costs, graph.ranks, op, chosen);
    total.compute_s += own.compute_s;
    total.communication_s += own.communication_s;
    for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
      const Operator& producer = graph.operators[op.inputs[slot]];
      total.communication_s +=
          edge_seconds(costs, graph.ranks, producer,
                       producer.signatures.at(strategy.at(op.inputs[slot])), chosen, slot);
    }
    total.memory_bytes +=
        op.parameter_bytes * chosen.parameter_share * costs.bytes_per_parameter_state +
        held_bytes(op.output_bytes, chosen.output, graph.ranks);
  }
  return total;
}

}  // namespace harness::spmd
