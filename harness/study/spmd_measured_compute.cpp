#include "harness/study/spmd_measured_compute.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/json_file.h"
#include "common/text_util.h"
#include "harness/launch/rank_program.h"
#include "planner/report/spmd_report.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Timed runs of each operator after one unmeasured (their median is kept).
constexpr int kRepetitions = 5;

// The plan of pass `s`: every operator under its signature s, or its first where it has fewer
// (those are not read back). Any mixture of signatures runs: reshard() joins them. Its prices
// are not read: FLOPs at any rate do (no rate is given where compute is measured).
json pass_plan(const spmd::OperatorGraph& graph, spmd::SpmdCosts costs, size_t pass) {
  if (!(costs.flops_per_s > 0)) costs.flops_per_s = 1;
  spmd::Strategy strategy;
  for (const spmd::Operator& op : graph.operators) {
    strategy.push_back(pass < op.signatures.size() ? static_cast<int>(pass) : 0);
  }
  return spmd::spmd_plan_json(spmd::operator_plans(graph, costs, strategy), {});
}

size_t most_signatures(const spmd::OperatorGraph& graph) {
  size_t most = 0;
  for (const spmd::Operator& op : graph.operators) most = std::max(most, op.signatures.size());
  return most;
}

std::vector<std::string> times_query(const SpmdComputeRun& run, int ranks,
                                     const std::vector<fs::path>& plans) {
  std::vector<std::string> args = {"spmd-times"};
  for (auto& flag : rank_model_flags(run.model)) args.push_back(std::move(flag));
  args.insert(
      args.end(),
      {"--loss", run.model.loss, "--optimizer", run.optimizer.name, "--momentum",
       format_number(run.optimizer.momentum), "--batch", std::to_string(run.batch), "--ranks",
       std::to_string(ranks), "--threads", std::to_string(run.threads), "--co-located",
       std::to_string(run.co_located), "--repetitions", std::to_string(kRepetitions)});
  for (const fs::path& plan : plans) args.insert(args.end(), {"--plan", plan.string()});
  return args;
}

void measure_spmd_compute(spmd::OperatorGraph& graph, spmd::SpmdCosts& costs,
                          const SpmdComputeRun& run, const RankProgram& program,
                          const fs::path& folder) {
  std::vector<fs::path> plans;
  for (size_t pass = 0; pass < most_signatures(graph); ++pass) {
    plans.push_back(folder / ("compute_plan_" + std::to_string(pass) + ".json"));
    write_file_atomic(plans.back(), json_text(pass_plan(graph, costs, pass), 1) + "\n");
  }
  const json answer = program.query(times_query(run, graph.ranks, plans));
  costs.step_seconds_per_parameter_byte = answer.at("step_s_per_parameter_byte");
  json operators = json::array();
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    spmd::Operator& op = graph.operators[i];
    json signatures = json::array();
    for (size_t s = 0; s < op.signatures.size(); ++s) {
      const json& timed = answer.at("plans").at(s).at(i);
      const double forward = timed.at("forward_s"), backward = timed.at("backward_s");
      op.signatures[s].measured_compute_s = forward + backward;
      signatures.push_back({{"signature", spmd::to_text(op.signatures[s].kind)},
                            {"forward_ms", forward * 1e3},
                            {"backward_ms", backward * 1e3}});
    }
    operators.push_back({{"name", op.name}, {"signatures", std::move(signatures)}});
  }
  const json times = {{"repetitions", kRepetitions},
                      {"threads", run.threads},
                      {"co_located", run.co_located},
                      {"optimizer", run.optimizer.name},
                      {"step_ms_per_mib", costs.step_seconds_per_parameter_byte * 1e3 * (1 << 20)},
                      {"operators", operators}};
  write_file_atomic(folder / "spmd_compute.json", json_text(times, 1) + "\n");
}

}  // namespace

ComputeTimer measured_compute_timer(SpmdComputeRun run, std::string executable, fs::path folder) {
  return [run = std::move(run), executable = std::move(executable), folder = std::move(folder)](
             spmd::OperatorGraph& graph, spmd::SpmdCosts& costs) {
    measure_spmd_compute(graph, costs, run, RankProgram(executable), folder);
  };
}

}  // namespace harness
