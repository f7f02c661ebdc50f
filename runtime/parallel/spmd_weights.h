// The zoo's weights as the operators of a searched SPMD plan hold them (planner/spmd's graph of
// llama, bert or vit): which of the zoo's tensors stand behind each operator, fused as the graph
// fuses them (llama's q, k and v; gate and up; bert's position rows under its word rows; vit's
// positions under its class token), laid out row group by row group so that a column split is one
// slice, and this rank's part of each.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/parallel/spmd_plan.h"

namespace runtime {

// Rows chunk `chunk` of `chunks` of the zoo's tensor `name` (bert's fused q, k, v: 3 chunks).
struct WeightPart {
  std::string name;
  int64_t chunk = 0;
  int64_t chunks = 1;
};

// Which of the zoo's transformers stands behind a plan: their tensors' names differ.
enum class ZooFamily { kLlama, kBert, kVit };

// The zoo's tensors behind an operator, by the graph's operator names; none for an operator
// without weights. ViT's class token and positions, [1, 1, width] and [1, tokens, width] in the
// zoo, are read as [1, width] and [tokens, width] (SpmdTransformer reshapes them).
struct ZooParts {
  std::vector<WeightPart> weight, bias;
};
ZooParts zoo_parts(const std::string& op, ZooFamily family);

// A weight (or bias) as this rank holds it: its parts stacked row-wise in `groups` (each part's
// j-th chunk of rows in group j), whole or this rank's `split` (0: rows, 1: columns).
struct SpmdWeight {
  std::vector<WeightPart> parts;
  std::vector<int64_t> part_rows;
  int64_t groups = 1;
  int split = -1;
  at::Tensor local;  // requires grad
};

struct OperatorWeights {
  SpmdWeight weight;
  std::optional<SpmdWeight> bias;
  // A row split's bias: added once, by rank 0, to the partial sums (its gradient there).
  bool bias_once = false;
};

// Which dimension of its weight an operator's signature splits: a projection's rows for column
// (its output features), its columns for row; the embedding table's rows for vocab and its
// columns for column (the features it looks up); the columns (features) of ViT's class token and
// positions for features. -1: whole.
int weight_split(const SpmdStep& step);

// This rank's weights of `step` from the zoo's tensors (by name). Throws std::invalid_argument
// where the model lacks one.
OperatorWeights take_weights(const SpmdStep& step, const ZooParts& parts,
                             const std::map<std::string, at::Tensor>& zoo,
                             const Communicator& group, int64_t groups);

// The zoo's tensors the ranks' parts make, by name (every rank calls it: a split is gathered).
void add_whole(const SpmdWeight& weight, Communicator& group,
               std::map<std::string, std::vector<at::Tensor>>& chunks_by_name);

// The parts stacked row-wise group by group, and back (`rows`: each part's).
at::Tensor grouped(const std::vector<at::Tensor>& parts, int64_t groups);
std::vector<at::Tensor> ungrouped(const at::Tensor& whole, const std::vector<int64_t>& rows,
                                  int64_t groups);

}  // namespace runtime
