// The schedule a pipeline layout runs: generated for the layout's positions and stages, or read
// from a schedule CSV, then checked against where the layout put each stage and run through the
// schedule check. What the runtime executes, the simulator times and --dry-run prints.
#pragma once

#include <string>

#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/pipeline/pipeline_schedule.h"

namespace runtime {

// The stage placement a schedule wants for `positions` pipeline ranks and `stages` stages: V for
// zbv, loop (stage c at position c mod p) otherwise.
std::vector<int> placement_for(PipelineSchedule schedule, int positions, int stages);

// Throws std::invalid_argument (ScheduleError for a schedule that cannot run) with the reason.
// `csv_text` is read when `schedule` is kCsv (named `csv_source` in errors).
ScheduleTable layout_schedule(PipelineSchedule schedule, const PipelineLayout& layout,
                              int micro_batches, const std::string& csv_text = "",
                              const std::string& csv_source = "schedule_csv");

// The same from each stage's position alone (the simulator's stages are not layer ranges).
ScheduleTable positioned_schedule(PipelineSchedule schedule, const std::vector<int>& positions,
                                  int micro_batches, const std::string& csv_text = "",
                                  const std::string& csv_source = "schedule_csv");

}  // namespace runtime
