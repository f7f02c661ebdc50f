#include "harness/spec/pipeline_schedule_source.h"

#include <stdexcept>

#include "runtime/pipeline/layout_schedule.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/pipeline/schedule_csv.h"

namespace harness {

std::optional<std::vector<int>> known_stage_positions(const SystemConfig& system) {
  const runtime::PipelineAxis& axis = system.pipeline.value();
  const auto schedule = axis.schedule;
  if (!system.plan.empty()) {
    if (!runs_one_stage_per_rank(schedule)) {
      throw std::invalid_argument("a plan gives one stage per rank, which " +
                                  runtime::to_string(schedule) +
                                  " does not run (give stages: N and stages_per_rank)");
    }
    return std::nullopt;
  }
  if (system.stage_count > 0) {
    if (schedule == runtime::PipelineSchedule::kCsv) {
      const auto csv = runtime::read_schedule_csv(axis.schedule_csv, system.schedule_csv_path);
      if (csv.ranks != system.stage_count) {
        throw std::invalid_argument(
            system.schedule_csv_path + " schedules " + std::to_string(csv.ranks) +
            " ranks, the system has stages: " + std::to_string(system.stage_count));
      }
      return csv.rank_of_stage;
    }
    const int stages = system.stage_count * system.stages_per_rank;
    // The counts checked against the schedule now (zbv: 2 per rank; others: 1, or interleaved).
    runtime::make_schedule(schedule, system.stage_count, system.stages_per_rank, 1);
    return runtime::placement_for(schedule, system.stage_count, stages);
  }
  return runtime::PipelineLayout{system.stages}.stage_positions();
}

std::optional<runtime::ScheduleTable> known_schedule(const SystemConfig& system,
                                                     const PointConfig& point) {
  const auto positions = known_stage_positions(system);
  if (!positions) return std::nullopt;
  return runtime::with_communication(runtime::positioned_schedule(
      system.pipeline->schedule, *positions, static_cast<int>(point.pipeline.micro_batches),
      system.pipeline->schedule_csv, system.schedule_csv_path));
}

std::string describe_known_schedule(const SystemConfig& system, const PointConfig& point) {
  const auto table = known_schedule(system, point);
  if (!table) return "      actions: one stage per rank, once the plan is made\n";
  std::string text;
  for (int r = 0; r < table->ranks; ++r) {
    text += "      rank " + std::to_string(r) + ": " +
            runtime::describe_actions(table->actions[r]) + "\n";
  }
  return text;
}

std::vector<PipelineStageSpec> placed_stages(const SystemConfig& system,
                                             const std::vector<int>& positions,
                                             std::vector<PipelineStageSpec> split,
                                             long long world_size) {
  if (positions.size() != split.size()) {
    throw std::logic_error("placed_stages: the split has another stage count");
  }
  const long long replicas = system.layout_ranks(world_size) / system.stage_count;
  for (size_t c = 0; c < split.size(); ++c) {
    split[c].ranks.clear();
    for (long long r = 0; r < replicas; ++r) {
      split[c].ranks.push_back(static_cast<int>(positions[c] * replicas + r));
    }
  }
  return split;
}

std::optional<std::vector<PipelineStageSpec>> known_stage_ranks(const SystemConfig& system,
                                                                const PointConfig& point) {
  if (system.stage_count == 0) {
    if (!system.plan.empty()) return std::nullopt;
    return system.stages;
  }
  const auto positions = known_stage_positions(system);
  if (!positions) return std::nullopt;
  std::vector<PipelineStageSpec> unplaced(positions->size());
  for (size_t c = 0; c < unplaced.size(); ++c) {
    unplaced[c].first_layer = unplaced[c].last_layer = static_cast<int>(c);
  }
  return placed_stages(system, *positions, std::move(unplaced), point.run.world_size);
}

}  // namespace harness
