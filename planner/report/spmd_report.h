// A searched SPMD strategy as people read it: per operator its signature, the form each input
// arrives in and the collectives that reshard it (forward, and its gradient backward), what it
// costs; per strategy (the searched one beside the harness's systems) the predicted iteration
// time and memory per rank. Console tables and plan JSON, both from operator_plans().
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "planner/spmd/noise_study.h"
#include "planner/spmd/spmd_costs.h"

namespace harness::spmd {

struct InputPlan {
  std::string from;  // the producing operator
  TensorForm form;   // as the operator takes it
  Collective forward = Collective::kNone;
  Collective backward = Collective::kNone;  // its gradient into the producer's form
  double seconds = 0;
  std::optional<TensorForm> grad;  // the form the operator hands the input's gradient back in
};

struct OperatorPlan {
  const Operator* op = nullptr;
  const Signature* signature = nullptr;
  std::vector<InputPlan> inputs;
  OperatorCost own;
  double communication_s() const;  // own and its inputs'
};

std::vector<OperatorPlan> operator_plans(const OperatorGraph& graph, const SpmdCosts& costs,
                                         const Strategy& strategy);

struct StrategyRow {
  std::string name;  // "searched", "data", "tensor", "experts"
  StrategyCost cost;
};

// "operator signature inputs output compute_ms comm_ms", one row per operator.
void write_operator_table(std::ostream& out, const std::vector<OperatorPlan>& plans);
// "strategy predicted_ms compute_ms comm_ms memory_MiB vs_searched", one row per strategy.
void write_strategy_table(std::ostream& out, const std::vector<StrategyRow>& rows);
// {"operators": [...], "strategies": [...]}: the plan file's body (the caller adds its inputs).
// Each operator carries its forms whole (inputs' forms and gradients' forms, output's and its
// gradient's; null where none flows): what a rank that runs the plan reads.
nlohmann::json spmd_plan_json(const std::vector<OperatorPlan>& plans,
                              const std::vector<StrategyRow>& rows);

// "seed predicted_ms relative same", one row per seed, then the mean relative time and how many
// seeds found the noise-free strategy.
void write_noise_table(std::ostream& out, const SpmdNoise& noise,
                       const std::vector<NoisySearch>& outcomes);
// The found strategies' time over the noise-free one's, averaged over the seeds (0 for none).
double mean_relative(const std::vector<NoisySearch>& outcomes);
// {"noise": {...}, "seeds": [...], "mean_relative": x}.
nlohmann::json noise_json(const SpmdNoise& noise, const std::vector<NoisySearch>& outcomes);

}  // namespace harness::spmd
