#include "planner/spmd/operator_graph.h"

#include <stdexcept>

namespace harness::spmd {
namespace {

void check_signature(const Operator& op, const Signature& signature) {
  const auto arity = op.inputs.size();
  if (signature.inputs.size() != arity || signature.input_grads.size() != arity) {
    throw std::invalid_argument("operator '" + op.name + "', signature '" +
                                to_text(signature.kind) + "': " + std::to_string(arity) +
                                " inputs, forms for " + std::to_string(signature.inputs.size()));
  }
  if (!(signature.compute_share > 0 && signature.compute_share <= 1) ||
      !(signature.parameter_share > 0 && signature.parameter_share <= 1)) {
    throw std::invalid_argument("operator '" + op.name + "', signature '" +
                                to_text(signature.kind) + "': shares must lie in (0, 1]");
  }
}

}  // namespace

void check_graph(const OperatorGraph& graph) {
  if (graph.ranks < 1) throw std::invalid_argument("an SPMD group needs at least one rank");
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const Operator& op = graph.operators[i];
    for (int input : op.inputs) {
      if (input < 0 || static_cast<size_t>(input) >= i) {
        throw std::invalid_argument("operator '" + op.name + "' reads operator " +
                                    std::to_string(input) + ", not an earlier one");
      }
    }
    if (op.signatures.empty()) {
      throw std::invalid_argument("operator '" + op.name + "' has no signature");
    }
    for (const Signature& signature : op.signatures) check_signature(op, signature);
  }
}

std::vector<int> last_consumers(const OperatorGraph& graph) {
  std::vector<int> last(graph.operators.size(), -1);
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    for (int input : graph.operators[i].inputs) last[input] = static_cast<int>(i);
  }
  return last;
}

}  // namespace harness::spmd
