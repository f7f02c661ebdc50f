#include "harness/analysis/pipeline_bubble.h"

#include <algorithm>
#include <limits>

#include "runtime/pipeline/schedule_check.h"
#include "runtime/pipeline/schedule_csv.h"

namespace harness {

using nlohmann::json;

std::optional<double> measured_pipeline_bubble(const std::vector<json>& ranks) {
  if (ranks.empty()) return std::nullopt;
  size_t iterations = std::numeric_limits<size_t>::max();
  for (const json& rank : ranks) iterations = std::min(iterations, rank.at("iterations").size());
  double sum = 0;
  long long count = 0;
  for (size_t i = 0; i < iterations; ++i) {
    double start = std::numeric_limits<double>::infinity(), end = 0, longest_own = 0;
    for (const json& rank : ranks) {
      const json& it = rank.at("iterations")[i];
      if (!it.contains("compute_start_us") || !it.contains("compute_end_us")) return std::nullopt;
      const double own_start = it["compute_start_us"].get<double>();
      const double own_end = it["compute_end_us"].get<double>();
      start = std::min(start, own_start);
      end = std::max(end, own_end);
      longest_own = std::max(longest_own, own_end - own_start);
    }
    const double span_ms = (end - start) / 1000.0;
    // Ranks on different hosts share no clock: their spans would not overlap as measured.
    if (span_ms <= 0 || end - start > 4 * longest_own) return std::nullopt;
    for (const json& rank : ranks) {
      const json& it = rank.at("iterations")[i];
      const double busy = it.value("forward_ms", 0.0) + it.value("backward_ms", 0.0);
      sum += std::max(0.0, 1.0 - busy / span_ms);
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / static_cast<double>(count);
}

namespace {

// The compute table the ranks ran (positions from replica 0 of each, its first tensor slice where
// a tensor axis splits the stages), and each position's rank
// file; nothing when the files lack the fields or cannot be read.
struct RunSchedule {
  runtime::ScheduleTable table;
  std::vector<const json*> position_rank;
};

std::optional<RunSchedule> run_schedule(const std::vector<json>& ranks) {
  RunSchedule run;
  runtime::ScheduleTable& table = run.table;
  std::vector<std::vector<runtime::PipelineAction>> by_position;
  for (const json& rank : ranks) {
    if (rank.value("replica", 0) != 0) continue;  // replicas run their position's list
    if (!rank.contains("schedule_order") || !rank.contains("stages_here")) return std::nullopt;
    const int position = rank.at("stage").get<int>();
    if (position >= static_cast<int>(by_position.size())) {
      by_position.resize(position + 1);
      run.position_rank.resize(position + 1, nullptr);
    }
    if (run.position_rank[position] != nullptr) continue;  // another tensor slice's: the same
    run.position_rank[position] = &rank;
    for (const auto& action :
         runtime::parse_actions(rank.at("schedule_order").get<std::string>())) {
      if (!action.is_compute()) continue;
      by_position[position].push_back(action);
      table.stages = std::max(table.stages, action.stage + 1);
      table.micro_batches = std::max(table.micro_batches, action.micro_batch + 1);
    }
    for (int c : rank.at("stages_here").get<std::vector<int>>()) {
      if (c >= static_cast<int>(table.rank_of_stage.size())) table.rank_of_stage.resize(c + 1, -1);
      table.rank_of_stage[c] = position;
    }
  }
  table.ranks = static_cast<int>(by_position.size());
  table.actions = std::move(by_position);
  if (table.ranks == 0 || static_cast<int>(table.rank_of_stage.size()) != table.stages ||
      std::find(run.position_rank.begin(), run.position_rank.end(), nullptr) !=
          run.position_rank.end()) {
    return std::nullopt;
  }
  return run;
}

// A position's mean F, I and W per action in one iteration, from its rank's phase sums.
runtime::StageCosts measured_costs(const std::vector<runtime::PipelineAction>& actions,
                                   const json& iteration) {
  const runtime::ComputeActionCounts counts = runtime::count_compute_actions(actions);
  const double forwards = counts.forwards, fulls = counts.fulls, inputs = counts.inputs,
               weights = counts.weights;
  const double backward = iteration.value("backward_ms", 0.0);
  const double weight = iteration.value("backward_weight_ms", 0.0);
  runtime::StageCosts costs;
  costs.forward = forwards > 0 ? iteration.value("forward_ms", 0.0) / forwards : 0;
  if (fulls == 0 && inputs > 0 && weights > 0) {
    costs.backward_input = (backward - weight) / inputs;
    costs.backward_weight = weight / weights;
  } else {  // B alone (or B beside I and W): I and W half of a B each
    const double halves = 2 * fulls + inputs + weights;
    costs.backward_input = costs.backward_weight = halves > 0 ? backward / halves : 0;
  }
  return costs;
}

}  // namespace

std::optional<double> schedule_bubble(const std::vector<json>& ranks) {
  try {
    const auto run = run_schedule(ranks);
    if (!run) return std::nullopt;
    return runtime::time_schedule(run->table).mean_bubble_fraction();
  } catch (const std::exception&) {
    return std::nullopt;  // a file this build cannot read: no figure rather than a wrong one
  }
}

std::optional<double> costed_schedule_bubble(const std::vector<json>& ranks) {
  try {
    const auto run = run_schedule(ranks);
    if (!run) return std::nullopt;
    const size_t iterations = run->position_rank.front()->at("iterations").size();
    double sum = 0;
    for (size_t i = 0; i < iterations; ++i) {
      std::vector<runtime::StageCosts> costs(static_cast<size_t>(run->table.stages));
      for (int p = 0; p < run->table.ranks; ++p) {
        const json& iteration = run->position_rank[p]->at("iterations").at(i);
        const runtime::StageCosts own = measured_costs(run->table.actions[p], iteration);
        for (int c : run->table.stages_of(p)) costs[c] = own;
      }
      sum += runtime::time_schedule(run->table, costs).mean_bubble_fraction();
    }
    if (iterations == 0) return std::nullopt;
    return sum / static_cast<double>(iterations);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace harness
