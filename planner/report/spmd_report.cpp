#include "planner/report/spmd_report.h"

#include <cstdio>

namespace harness::spmd {
namespace {

InputPlan input_plan(const OperatorGraph& graph, const SpmdCosts& costs, const Strategy& strategy,
                     const Operator& op, const Signature& chosen, size_t slot) {
  const int from = op.inputs[slot];
  const Operator& producer = graph.operators[from];
  const Signature& produced = producer.signatures[strategy[from]];
  InputPlan plan{producer.name, chosen.inputs[slot],
                 resharding(produced.output, chosen.inputs[slot])};
  plan.grad = chosen.input_grads[slot];
  if (produced.output_grad && chosen.input_grads[slot]) {
    plan.backward = resharding(*chosen.input_grads[slot], *produced.output_grad);
  }
  plan.seconds = edge_seconds(costs, graph.ranks, producer, produced, chosen, slot);
  return plan;
}

// "S0", or "R<all-gather" where a collective brings the input into its form, with "/grad
// reduce-scatter" where its gradient needs one back.
std::string input_text(const InputPlan& input) {
  std::string text = form_text(input.form);
  if (input.forward != Collective::kNone) text += std::string("<") + collective_name(input.forward);
  if (input.backward != Collective::kNone) {
    text += std::string("/grad:") + collective_name(input.backward);
  }
  return text;
}

nlohmann::json optional_form(const std::optional<TensorForm>& form) {
  return form ? nlohmann::json(form_text(*form)) : nlohmann::json();
}

nlohmann::json input_json(const InputPlan& input) {
  return {{"from", input.from},
          {"form", form_text(input.form)},
          {"grad", optional_form(input.grad)},
          {"forward", collective_name(input.forward)},
          {"backward", collective_name(input.backward)},
          {"seconds", input.seconds}};
}

}  // namespace

double OperatorPlan::communication_s() const {
  double seconds = own.communication_s;
  for (const InputPlan& input : inputs) seconds += input.seconds;
  return seconds;
}

std::vector<OperatorPlan> operator_plans(const OperatorGraph& graph, const SpmdCosts& costs,
                                         const Strategy& strategy) {
  std::vector<OperatorPlan> plans;
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const Operator& op = graph.operators[i];
    const Signature& chosen = op.signatures.at(strategy.at(i));
    OperatorPlan plan{&op, &chosen, {}, operator_cost(costs, graph.ranks, op, chosen)};
    for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
      plan.inputs.push_back(input_plan(graph, costs, strategy, op, chosen, slot));
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

void write_operator_table(std::ostream& out, const std::vector<OperatorPlan>& plans) {
  char line[512];
  std::snprintf(line, sizeof line, "%-28s %-16s %-44s %-6s %11s %9s\n", "operator", "signature",
                "inputs", "output", "compute_ms", "comm_ms");
  out << line;
  for (const OperatorPlan& plan : plans) {
    std::string inputs;
    for (const InputPlan& input : plan.inputs) {
      inputs += (inputs.empty() ? "" : " ") + input_text(input);
    }
    std::snprintf(line, sizeof line, "%-28s %-16s %-44s %-6s %11.3f %9.3f\n", plan.op->name.c_str(),
                  to_text(plan.signature->kind), inputs.empty() ? "-" : inputs.c_str(),
                  form_text(plan.signature->output).c_str(), plan.own.compute_s * 1e3,
                  plan.communication_s() * 1e3);
    out << line;
  }
}

void write_strategy_table(std::ostream& out, const std::vector<StrategyRow>& rows) {
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %13s %11s %9s %11s %12s\n", "strategy", "predicted_ms",
                "compute_ms", "comm_ms", "memory_MiB", "vs_searched");
  out << line;
  const double searched = rows.empty() ? 0.0 : rows.front().cost.seconds();
  for (const StrategyRow& row : rows) {
    std::snprintf(line, sizeof line, "%-10s %13.3f %11.3f %9.3f %11.1f %11.3fx\n", row.name.c_str(),
                  row.cost.seconds() * 1e3, row.cost.compute_s * 1e3,
                  row.cost.communication_s * 1e3, row.cost.memory_bytes / (1 << 20),
                  row.cost.seconds() / searched);
    out << line;
  }
}

nlohmann::json spmd_plan_json(const std::vector<OperatorPlan>& plans,
                              const std::vector<StrategyRow>& rows) {
  nlohmann::json operators = nlohmann::json::array(), strategies = nlohmann::json::array();
  for (const OperatorPlan& plan : plans) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const InputPlan& input : plan.inputs) inputs.push_back(input_json(input));
    operators.push_back({{"name", plan.op->name},
                         {"kind", to_text(plan.op->kind)},
                         {"signature", to_text(plan.signature->kind)},
                         {"inputs", inputs},
                         {"output", form_text(plan.signature->output)},
                         {"output_grad", optional_form(plan.signature->output_grad)},
                         {"compute_s", plan.own.compute_s},
                         {"communication_s", plan.communication_s()}});
  }
  for (const StrategyRow& row : rows) {
    strategies.push_back({{"name", row.name},
                          {"predicted_s", row.cost.seconds()},
                          {"compute_s", row.cost.compute_s},
                          {"communication_s", row.cost.communication_s},
                          {"memory_bytes", row.cost.memory_bytes}});
  }
  return {{"operators", operators}, {"strategies", strategies}};
}

double mean_relative(const std::vector<NoisySearch>& outcomes) {
  double sum = 0;
  for (const NoisySearch& outcome : outcomes) sum += outcome.relative;
  return outcomes.empty() ? 0.0 : sum / static_cast<double>(outcomes.size());
}

void write_noise_table(std::ostream& out, const SpmdNoise& noise,
                       const std::vector<NoisySearch>& outcomes) {
  char line[256];
  std::snprintf(line, sizeof line,
                "# noise: FLOPs +-%.0f%%, bandwidth +-%.0f%%, communication x %g; the strategy "
                "found, priced on the true inputs\n",
                noise.flops_fraction * 100, noise.bandwidth_fraction * 100,
                noise.communication_scale);
  out << line;
  std::snprintf(line, sizeof line, "%-6s %13s %9s %5s\n", "seed", "predicted_ms", "relative",
                "same");
  out << line;
  int same = 0;
  for (const NoisySearch& outcome : outcomes) {
    std::snprintf(line, sizeof line, "%-6llu %13.3f %9.4f %5s\n",
                  static_cast<unsigned long long>(outcome.seed), outcome.true_seconds * 1e3,
                  outcome.relative, outcome.same_strategy ? "yes" : "no");
    out << line;
    same += outcome.same_strategy ? 1 : 0;
  }
  std::snprintf(line, sizeof line,
                "mean relative %.4f over %zu seeds; %d found the noise-free strategy\n",
                mean_relative(outcomes), outcomes.size(), same);
  out << line;
}

nlohmann::json noise_json(const SpmdNoise& noise, const std::vector<NoisySearch>& outcomes) {
  nlohmann::json seeds = nlohmann::json::array();
  for (const NoisySearch& outcome : outcomes) {
    seeds.push_back({{"seed", outcome.seed},
                     {"predicted_s", outcome.true_seconds},
                     {"relative", outcome.relative},
                     {"same_strategy", outcome.same_strategy}});
  }
  return {{"noise",
           {{"flops_fraction", noise.flops_fraction},
            {"bandwidth_fraction", noise.bandwidth_fraction},
            {"communication_scale", noise.communication_scale}}},
          {"seeds", seeds},
          {"mean_relative", mean_relative(outcomes)}};
}

}  // namespace harness::spmd
