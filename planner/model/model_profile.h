// A profile prepared for planning: the antichain states with their cumulative compute,
// activation and parameter totals, exposed as the published planner's (L+1) x L matrices.
#pragma once

#include <string>
#include <vector>

#include "planner/model/antichain_dag.h"
#include "planner/model/profile_graph.h"

namespace harness::planner {

// The (L+1) x L matrix of the published planner, computed on demand from the cumulative row:
// at(0, j) is the total up to state j; at(i, j) = at(0, j) - at(0, i-1) for j >= i is the total
// of states i..j; every other cell is the sentinel -1. Values are at the profile batch size.
class CumulativeMatrix {
 public:
  CumulativeMatrix() = default;
  explicit CumulativeMatrix(std::vector<double> cumulative) : cumulative_(std::move(cumulative)) {}

  static constexpr double kNoValue = -1.0;
  int columns() const { return static_cast<int>(cumulative_.size()); }
  int rows() const { return columns() + 1; }
  double at(int i, int j) const {
    if (i < 0 || j < 0 || i > columns() || j >= columns() || j < i) return kNoValue;
    return i == 0 ? cumulative_[j] : cumulative_[j] - cumulative_[i - 1];
  }
  double total() const { return cumulative_.empty() ? 0.0 : cumulative_.back(); }
  const std::vector<double>& cumulative() const { return cumulative_; }

 private:
  std::vector<double> cumulative_;
};

struct ModelProfile {
  std::string source;
  LayerGraph graph;  // after pruning inputs and __getitem__ sinks
  AntichainDag dag;
  CumulativeMatrix compute_s;  // (forward + backward ms) / 1000
  CumulativeMatrix activation_bytes;
  CumulativeMatrix parameter_bytes;
  std::vector<double> output_activation_bytes;  // OA[i]: over the augmented antichain of i

  int num_states() const { return static_cast<int>(dag.states.size()); }
  const std::vector<int>& ancestors(int state) const { return dag.ancestors[state]; }
  // Layer nodes (graph indices, ascending) that a stage covering states first..last runs:
  // those up to `last` that are not already done at `first - 1`.
  std::vector<int> layers_of_stage(int first_state, int last_state) const;
};

// (Re)computes the matrices and output activations from `graph` and `dag`; the noise study
// calls it after perturbing layer costs, which leaves the antichain states unchanged.
void compute_state_totals(ModelProfile& profile);
// Prepares an already parsed graph (it is pruned here).
ModelProfile prepare_model_profile(const LayerGraph& parsed);
// Reads, parses, prunes and prepares a profile file. InputError on malformed input.
ModelProfile import_profile(const std::string& path);

}  // namespace harness::planner
