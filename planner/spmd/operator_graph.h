// A model as HiDup's search sees it: operators in topological order, each producing one tensor,
// each with the SPMD signatures it can run under over one group of ranks. A signature says in
// which form the operator takes each input and hands back its gradient, in which form it leaves
// its output and needs that output's gradient, and what share of the work and parameters a
// rank keeps. Torch-free: built from a model's shape (transformer_graph.h) or by hand in tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/spmd_vocabulary.h"
#include "common/tensor_form.h"

namespace harness::spmd {

// A collective an operator runs inside itself (an expert layer's dispatch and combine), per
// iteration, forward and backward together.
struct InnerCollective {
  Collective collective = Collective::kNone;
  double buffer_bytes = 0;  // per call, in nccl-tests' sense (collective_buffer_bytes)
  int calls = 0;
};

struct Signature {
  SignatureKind kind = SignatureKind::kReplicated;
  std::vector<TensorForm> inputs;
  // The form of the gradient handed back for each input; nullopt where the input takes none
  // (token ids).
  std::vector<std::optional<TensorForm>> input_grads;
  TensorForm output;
  // The form the output's gradient must arrive in; nullopt where no gradient flows back (a loss).
  std::optional<TensorForm> output_grad;
  double compute_share = 1.0;  // of the operator's FLOPs one rank runs
  // One rank's forward and backward of the operator under this signature as timed on the
  // machine (spmd_compute.json); where set, it prices compute in place of the FLOPs.
  std::optional<double> measured_compute_s;
  double parameter_share = 1.0;  // of its parameters one rank holds
  // Parameter bytes whose gradients the ranks sum (replicated weights under split work).
  double synced_gradient_bytes = 0;
  std::vector<InnerCollective> inner;
};

struct Operator {
  std::string name;
  OperatorKind kind = OperatorKind::kLinear;
  std::vector<int> inputs;  // indices of the producing operators, all earlier in the graph
  double forward_flops = 0;
  double parameter_bytes = 0;
  double output_bytes = 0;  // the whole output tensor
  std::vector<Signature> signatures;
};

struct OperatorGraph {
  int ranks = 1;  // the group every operator splits over
  std::vector<Operator> operators;
  // Whether the harness's Megatron system (`kind: tensor_parallel`) runs the model the graph is
  // of, so that its strategy is one to price beside the searched one (reference_strategies.h):
  // llama's and bert's, not ViT's (runtime::tensor_split_problem).
  bool megatron_runs = true;
};

// Throws std::invalid_argument where the graph is malformed: an input not earlier than its
// consumer, an operator without signatures, a signature whose forms do not match its inputs.
void check_graph(const OperatorGraph& graph);

// For each operator, the last operator that consumes its output; -1 where none does.
std::vector<int> last_consumers(const OperatorGraph& graph);

// A choice of one signature per operator.
using Strategy = std::vector<int>;

}  // namespace harness::spmd
