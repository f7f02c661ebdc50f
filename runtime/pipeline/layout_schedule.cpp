#include "runtime/pipeline/layout_schedule.h"

#include <algorithm>
#include <stdexcept>

#include "runtime/pipeline/schedule_check.h"
#include "runtime/pipeline/schedule_csv.h"

namespace runtime {

namespace {

std::string list_text(const std::vector<int>& values) {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return "[" + text + "]";
}

}  // namespace

std::vector<int> placement_for(PipelineSchedule schedule, int positions, int stages) {
  if (schedule == PipelineSchedule::kZbv && stages == 2 * positions) return v_placement(positions);
  return loop_placement(positions, std::max(1, stages / std::max(1, positions)));
}

ScheduleTable positioned_schedule(PipelineSchedule schedule, const std::vector<int>& positions,
                                  int micro_batches, const std::string& csv_text,
                                  const std::string& csv_source) {
  const int stages = static_cast<int>(positions.size());
  const int ranks =
      positions.empty() ? 0 : *std::max_element(positions.begin(), positions.end()) + 1;
  ScheduleTable table;
  if (schedule == PipelineSchedule::kCsv) {
    table = read_schedule_csv(csv_text, csv_source);
    if (table.micro_batches != micro_batches) {
      throw std::invalid_argument(csv_source + " schedules " + std::to_string(table.micro_batches) +
                                  " micro-batches, the pipeline runs " +
                                  std::to_string(micro_batches) + " (pipeline.micro_batches)");
    }
    if (table.ranks != ranks || table.stages != stages) {
      throw std::invalid_argument(csv_source + " has " + std::to_string(table.ranks) +
                                  " ranks and " + std::to_string(table.stages) +
                                  " stages, the pipeline " + std::to_string(ranks) + " and " +
                                  std::to_string(stages));
    }
  } else {
    if (stages % ranks != 0) {
      throw std::invalid_argument(std::to_string(stages) + " stages over " + std::to_string(ranks) +
                                  " pipeline ranks: every rank must hold as many stages");
    }
    table = make_schedule(schedule, ranks, stages / ranks, micro_batches);
  }
  if (table.rank_of_stage != positions) {
    throw std::invalid_argument(
        to_string(schedule) + " places the stages on pipeline ranks " +
        list_text(table.rank_of_stage) + ", the layout on " + list_text(positions) +
        (schedule == PipelineSchedule::kZbv   ? " (zbv: stage c on rank c for c < p, 2p-1-c after)"
         : schedule == PipelineSchedule::kCsv ? " (the CSV's row r holds rank r's actions)"
                                              : " (stage c on rank c mod p)"));
  }
  validate_schedule(table);
  return table;
}

ScheduleTable layout_schedule(PipelineSchedule schedule, const PipelineLayout& layout,
                              int micro_batches, const std::string& csv_text,
                              const std::string& csv_source) {
  return positioned_schedule(schedule, layout.stage_positions(), micro_batches, csv_text,
                             csv_source);
}

}  // namespace runtime
