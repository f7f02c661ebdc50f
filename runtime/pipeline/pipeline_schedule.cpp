#include "runtime/pipeline/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace runtime {

PipelineSchedule parse_pipeline_schedule(const std::string& name) {
  if (name == "dapple") return PipelineSchedule::kDapple;
  if (name == "gpipe") return PipelineSchedule::kGpipe;
  throw std::invalid_argument("unknown pipeline schedule '" + name +
                              "' (expected dapple or gpipe)");
}

std::string to_string(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kDapple ? "dapple" : "gpipe";
}

std::vector<PipelineAction> make_stage_schedule(PipelineSchedule schedule, int stages, int stage,
                                                int micro_batches) {
  if (stages < 1 || stage < 0 || stage >= stages || micro_batches < 1) {
    throw std::invalid_argument(
        "pipeline schedule needs 0 <= stage < stages and micro_batches >= 1");
  }
  using Kind = PipelineAction::Kind;
  std::vector<PipelineAction> actions;
  actions.reserve(2 * micro_batches);
  if (schedule == PipelineSchedule::kGpipe) {
    for (int m = 0; m < micro_batches; ++m) actions.push_back({Kind::kForward, m});
    for (int m = 0; m < micro_batches; ++m) actions.push_back({Kind::kBackward, m});
    return actions;
  }
  // Early backward: the later a stage, the sooner its first backward can start, so it needs
  // fewer forwards in flight to keep busy; the last stage needs none.
  const int warmup = std::min(stages - stage - 1, micro_batches);
  int next_forward = 0, next_backward = 0;
  for (; next_forward < warmup; ++next_forward) actions.push_back({Kind::kForward, next_forward});
  while (next_forward < micro_batches) {
    actions.push_back({Kind::kForward, next_forward++});
    actions.push_back({Kind::kBackward, next_backward++});
  }
  while (next_backward < micro_batches) actions.push_back({Kind::kBackward, next_backward++});
  return actions;
}

int warmup_forwards(const std::vector<PipelineAction>& actions) {
  int count = 0;
  for (const auto& action : actions) {
    if (action.kind == PipelineAction::Kind::kBackward) break;
    ++count;
  }
  return count;
}

int peak_in_flight(const std::vector<PipelineAction>& actions) {
  int in_flight = 0, peak = 0;
  for (const auto& action : actions) {
    in_flight += action.kind == PipelineAction::Kind::kForward ? 1 : -1;
    peak = std::max(peak, in_flight);
  }
  return peak;
}

std::string describe_schedule(const std::vector<PipelineAction>& actions) {
  std::string text;
  for (const auto& action : actions) {
    if (!text.empty()) text += ' ';
    text += action.kind == PipelineAction::Kind::kForward ? 'F' : 'B';
    text += std::to_string(action.micro_batch);
  }
  return text;
}

}  // namespace runtime
