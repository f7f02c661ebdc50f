// The schedule a pipeline system runs at a point (runtime/pipeline/layout_schedule.h), where it
// is known before any run: `stages: N` (stages placed as the schedule, or its CSV, places them)
// and inline stages. A plan's stages are known once planned; its schedules run one stage per
// rank. What the spec check refuses early, `--dry-run` prints and `stages: N` places by.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/spec/spec.h"
#include "runtime/pipeline/pipeline_schedule.h"

namespace harness {

// The pipeline position of each of the system's stages; nothing for a plan. Throws
// std::invalid_argument (a schedule that does not take these counts, a CSV of other ranks).
std::optional<std::vector<int>> known_stage_positions(const SystemConfig& system);

// The schedule with its sends and receives; nothing for a plan. Throws std::invalid_argument
// (runtime::ScheduleError for a schedule that cannot run: rank and step).
std::optional<runtime::ScheduleTable> known_schedule(const SystemConfig& system,
                                                     const PointConfig& point);

// Each pipeline rank's actions, a line per rank ("      rank 0: 0F0 0SEND_F0 ..."), as
// `harness run --dry-run` prints them; for a plan, a line saying they follow once it is made.
std::string describe_known_schedule(const SystemConfig& system, const PointConfig& point);

// The ranks of each of the system's stages at the point (their layers only where inline):
// nothing for a plan. Throws as known_stage_positions does.
std::optional<std::vector<PipelineStageSpec>> known_stage_ranks(const SystemConfig& system,
                                                                const PointConfig& point);

// `stages: N` cut into N x stages-per-rank stages: `split` holds their layers (equal_stages or
// balanced_stages), each placed at its position's ranks (`positions`, known_stage_positions;
// world_size / N ranks each, or tensor groups: SystemConfig::layout_ranks).
std::vector<PipelineStageSpec> placed_stages(const SystemConfig& system,
                                             const std::vector<int>& positions,
                                             std::vector<PipelineStageSpec> split,
                                             long long world_size);

}  // namespace harness
