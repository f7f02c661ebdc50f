// HiDup's search (planner/spmd) as the harness runs it, for `harness spmd` and for a `kind:
// spmd` system at each point of a study: the zoo's transformer at the model's shape, priced by a
// comm.json and a rank's GFLOP/s, searched, and the document spmd_plan.json holds.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/profile/spmd_costs_file.h"
#include "harness/spec/spec.h"
#include "planner/report/spmd_report.h"
#include "planner/spmd/strategy_search.h"
#include "planner/spmd/transformer_graph.h"
#include "runtime/models/model_catalog.h"

namespace harness {

// A zoo transformer's options as a spec's `model:` gives them (0: the zoo's default), and the
// global batch in sequences.
struct SpmdModel {
  std::string name;
  int64_t batch = 0;
  int64_t tokens = 0, width = 0, depth = 0;
  runtime::DecoderShape decoder;
  runtime::MoeShape moe;
  int64_t classes = 0;         // the encoders' classifier; 0: the zoo's (bert 2, vit 1000)
  std::vector<int64_t> image;  // vit, vit_moe: [channels, height, width]; empty: the zoo's
};

// A spec's `model:` as the search takes it, with the sequences (or images) of an iteration over
// all ranks: a text model's input_shape is [tokens], a vision model's its image.
SpmdModel spmd_model_of(const ModelConfig& model, int64_t global_batch);

// The tokens a sample of the zoo's `model` has: `tokens`, else its default input shape's.
int64_t zoo_tokens(const std::string& model, int64_t tokens);

// The shape the zoo builds (runtime/models: llama.cpp, model_zoo.cpp), its defaults filled in.
spmd::TransformerShape zoo_transformer_shape(const SpmdModel& model);

struct SpmdSearch {
  spmd::OperatorGraph graph;
  SpmdCostInputs inputs;
  spmd::SearchResult found;
  double search_ms = 0;

  // The searched strategy, then the harness's systems in the same terms (reference_strategies.h).
  std::vector<spmd::StrategyRow> strategy_rows() const;
  // Per operator; they point into `graph`: this object outlives them.
  std::vector<spmd::OperatorPlan> operator_plans() const;
  // spmd_plan.json: operators, strategies, the search's size and time, and `inputs`.
  nlohmann::json plan_document(nlohmann::json inputs_json) const;
};

// Sets measured times on the graph's signatures (Signature::measured_compute_s) before the search.
using ComputeTimer = std::function<void(spmd::OperatorGraph&, spmd::SpmdCosts&)>;

// Throws InputError for an unreadable comm.json or a graph whose cuts are too wide to search.
// With `time_compute`, compute is priced by what it measures.
SpmdSearch run_spmd_search(const spmd::TransformerShape& shape, int ranks, const std::string& comm,
                           double gflops, const ComputeTimer& time_compute = {});

// `inputs` of spmd_plan.json: the model's shape, the ranks, what priced it (`compute`: flops
// or measured).
nlohmann::json spmd_inputs_json(const std::string& model, const spmd::TransformerShape& shape,
                                int ranks, const std::string& comm, double gflops,
                                bool measured_compute, const SpmdCostInputs& inputs);

}  // namespace harness
