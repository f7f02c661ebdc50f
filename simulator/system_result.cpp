#include "simulator/system_result.h"

namespace harness::simulator {

std::vector<RankPhases> rank_phases(const TaskGraph& graph, const TaskTimes& times) {
  std::vector<RankPhases> ranks(static_cast<size_t>(graph.ranks()));
  const auto& tasks = graph.tasks();
  for (size_t t = 0; t < tasks.size(); ++t) {
    const Task& task = tasks[t];
    if (task.kind != TaskKind::kCompute) continue;
    const double ms = (times.end[t] - times.start[t]) * 1000.0;
    if (task.category == TaskCategory::kForward) ranks[task.rank].forward_ms += ms;
    if (task.category == TaskCategory::kStep) ranks[task.rank].step_ms += ms;
  }
  for (RankPhases& rank : ranks) {
    rank.iteration_ms = times.makespan * 1000.0;
    rank.backward_ms = std::max(0.0, rank.iteration_ms - rank.forward_ms - rank.step_ms);
  }
  return ranks;
}

}  // namespace harness::simulator
