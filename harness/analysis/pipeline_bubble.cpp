#include "harness/analysis/pipeline_bubble.h"

#include <algorithm>
#include <limits>
#include <sstream>

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
      if (!it.contains("actions_start_us") || !it.contains("compute_end_us")) return std::nullopt;
      const double own_start = it["actions_start_us"].get<double>();
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

std::optional<double> schedule_bubble(const std::vector<json>& ranks) {
  runtime::ScheduleTable table;
  std::vector<std::vector<runtime::PipelineAction>> by_position;
  try {
    for (const json& rank : ranks) {
      if (rank.value("replica", 0) != 0) continue;  // replicas run their position's list
      if (!rank.contains("schedule_order") || !rank.contains("stages_here")) return std::nullopt;
      const int position = rank.at("stage").get<int>();
      if (position >= static_cast<int>(by_position.size())) by_position.resize(position + 1);
      std::istringstream words(rank.at("schedule_order").get<std::string>());
      for (std::string word; words >> word;) {
        const runtime::PipelineAction action = runtime::parse_action(word);
        if (!action.is_compute()) continue;
        by_position[position].push_back(action);
        table.stages = std::max(table.stages, action.stage + 1);
        table.micro_batches = std::max(table.micro_batches, action.micro_batch + 1);
      }
      for (int c : rank.at("stages_here").get<std::vector<int>>()) {
        if (c >= static_cast<int>(table.rank_of_stage.size()))
          table.rank_of_stage.resize(c + 1, -1);
        table.rank_of_stage[c] = position;
      }
    }
    table.ranks = static_cast<int>(by_position.size());
    table.actions = std::move(by_position);
    if (table.ranks == 0 || static_cast<int>(table.rank_of_stage.size()) != table.stages) {
      return std::nullopt;
    }
    return runtime::time_schedule(table).mean_bubble_fraction();
  } catch (const std::exception&) {
    return std::nullopt;  // a file this build cannot read: no figure rather than a wrong one
  }
}

}  // namespace harness
