#include "runtime/pipeline/pipeline_schedule.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "runtime/pipeline/schedule_orders.h"

namespace runtime {

namespace {

struct ScheduleName {
  PipelineSchedule schedule;
  const char* name;
};
constexpr ScheduleName kNames[] = {
    {PipelineSchedule::kDapple, "dapple"},
    {PipelineSchedule::kGpipe, "gpipe"},
    {PipelineSchedule::kInterleaved1F1B, "interleaved_1f1b"},
    {PipelineSchedule::kZbH1, "zb_h1"},
    {PipelineSchedule::kZbv, "zbv"},
    {PipelineSchedule::kCsv, "csv"},
};

}  // namespace

PipelineSchedule parse_pipeline_schedule(const std::string& name) {
  for (const auto& entry : kNames) {
    if (name == entry.name) return entry.schedule;
  }
  throw std::invalid_argument("unknown pipeline schedule '" + name +
                              "' (expected dapple, gpipe, interleaved_1f1b, zb_h1 or zbv)");
}

std::string to_string(PipelineSchedule schedule) {
  for (const auto& entry : kNames) {
    if (schedule == entry.schedule) return entry.name;
  }
  return "?";
}

const std::vector<std::string>& pipeline_schedule_names() {
  static const std::vector<std::string> names = {"dapple", "gpipe", "interleaved_1f1b", "zb_h1",
                                                 "zbv"};
  return names;
}

bool runs_one_stage_per_rank(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kGpipe || schedule == PipelineSchedule::kDapple ||
         schedule == PipelineSchedule::kZbH1;
}

bool splits_every_backward(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kZbH1 || schedule == PipelineSchedule::kZbv;
}

bool PipelineAction::is_compute() const {
  return kind == Kind::kForward || kind == Kind::kBackward || kind == Kind::kBackwardInput ||
         kind == Kind::kBackwardWeight;
}

std::vector<int> ScheduleTable::stages_of(int rank) const {
  std::vector<int> stages_here;
  for (int c = 0; c < static_cast<int>(rank_of_stage.size()); ++c) {
    if (rank_of_stage[c] == rank) stages_here.push_back(c);
  }
  return stages_here;
}

std::vector<int> loop_placement(int ranks, int stages_per_rank) {
  std::vector<int> placement(static_cast<size_t>(ranks * stages_per_rank));
  for (int c = 0; c < ranks * stages_per_rank; ++c) placement[c] = c % ranks;
  return placement;
}

std::vector<int> v_placement(int ranks) {
  std::vector<int> placement(static_cast<size_t>(2 * ranks));
  for (int c = 0; c < 2 * ranks; ++c) placement[c] = c < ranks ? c : 2 * ranks - 1 - c;
  return placement;
}

ScheduleTable make_schedule(PipelineSchedule schedule, int ranks, int stages_per_rank,
                            int micro_batches) {
  if (ranks < 1 || stages_per_rank < 1 || micro_batches < 1) {
    throw std::invalid_argument(
        "a pipeline schedule needs ranks, stages per rank and micro-batches >= 1");
  }
  const std::string name = to_string(schedule);
  if (runs_one_stage_per_rank(schedule) && stages_per_rank != 1) {
    throw std::invalid_argument(
        name + " runs one stage per rank (stages_per_rank: " + std::to_string(stages_per_rank) +
        "); several need interleaved_1f1b or zbv");
  }
  if (schedule == PipelineSchedule::kZbv && stages_per_rank != 2) {
    throw std::invalid_argument("zbv runs exactly 2 stages per rank (stages_per_rank: " +
                                std::to_string(stages_per_rank) + ")");
  }
  if (schedule == PipelineSchedule::kCsv) {
    throw std::invalid_argument("a csv schedule is read from its file, not generated");
  }
  ScheduleTable table;
  table.schedule = schedule;
  table.ranks = ranks;
  table.stages = ranks * stages_per_rank;
  table.micro_batches = micro_batches;
  table.rank_of_stage = schedule == PipelineSchedule::kZbv ? v_placement(ranks)
                                                           : loop_placement(ranks, stages_per_rank);
  for (int r = 0; r < ranks; ++r) {
    switch (schedule) {
      case PipelineSchedule::kGpipe:
        table.actions.push_back(schedule_orders::gpipe(r, micro_batches));
        break;
      case PipelineSchedule::kDapple:
        table.actions.push_back(schedule_orders::one_f_one_b(ranks, r, micro_batches));
        break;
      case PipelineSchedule::kInterleaved1F1B:
        table.actions.push_back(
            schedule_orders::interleaved(ranks, stages_per_rank, r, micro_batches));
        break;
      case PipelineSchedule::kZbH1:
        table.actions.push_back(schedule_orders::zero_bubble_h1(ranks, r, micro_batches));
        break;
      case PipelineSchedule::kZbv:
        table.actions.push_back(schedule_orders::zero_bubble_v(ranks, r, micro_batches));
        break;
      case PipelineSchedule::kCsv:
        break;
    }
  }
  return table;
}

ScheduleTable with_communication(const ScheduleTable& compute) {
  using Kind = PipelineAction::Kind;
  ScheduleTable table = compute;
  const auto remote = [&](int rank, int stage) {
    return stage >= 0 && stage < compute.stages && compute.rank_of_stage[stage] != rank;
  };
  for (int r = 0; r < compute.ranks; ++r) {
    std::vector<PipelineAction> lowered;
    size_t previous_compute = 0;  // where the compute action before this one sits in `lowered`
    for (const PipelineAction& a : compute.actions[r]) {
      if (!a.is_compute()) continue;  // a list given with its own: they are made again here
      const bool forward = a.kind == Kind::kForward;
      const int from = forward ? a.stage - 1 : a.stage + 1;
      const int to = forward ? a.stage + 1 : a.stage - 1;
      const bool moves = forward || a.carries_gradient();
      if (moves && remote(r, from)) {
        lowered.insert(
            lowered.begin() + static_cast<std::ptrdiff_t>(previous_compute),
            {forward ? Kind::kRecvActivations : Kind::kRecvGradients, a.stage, a.micro_batch});
      }
      previous_compute = lowered.size();
      lowered.push_back(a);
      if (moves && remote(r, to)) {
        lowered.push_back(
            {forward ? Kind::kSendActivations : Kind::kSendGradients, a.stage, a.micro_batch});
      }
    }
    table.actions[r] = std::move(lowered);
  }
  return table;
}

std::string to_string(const PipelineAction& action) {
  const char* type = "?";
  switch (action.kind) {
    case PipelineAction::Kind::kForward:
      type = "F";
      break;
    case PipelineAction::Kind::kBackward:
      type = "B";
      break;
    case PipelineAction::Kind::kBackwardInput:
      type = "I";
      break;
    case PipelineAction::Kind::kBackwardWeight:
      type = "W";
      break;
    case PipelineAction::Kind::kSendActivations:
      type = "SEND_F";
      break;
    case PipelineAction::Kind::kRecvActivations:
      type = "RECV_F";
      break;
    case PipelineAction::Kind::kSendGradients:
      type = "SEND_B";
      break;
    case PipelineAction::Kind::kRecvGradients:
      type = "RECV_B";
      break;
  }
  return std::to_string(action.stage) + type + std::to_string(action.micro_batch);
}

std::string describe_actions(const std::vector<PipelineAction>& actions) {
  std::string text;
  for (const auto& action : actions) {
    if (!text.empty()) text += ' ';
    text += to_string(action);
  }
  return text;
}

ComputeActionCounts count_compute_actions(const std::vector<PipelineAction>& actions) {
  using Kind = PipelineAction::Kind;
  ComputeActionCounts counts;
  for (const auto& a : actions) {
    counts.forwards += a.kind == Kind::kForward;
    counts.fulls += a.kind == Kind::kBackward;
    counts.inputs += a.kind == Kind::kBackwardInput;
    counts.weights += a.kind == Kind::kBackwardWeight;
  }
  return counts;
}

int peak_in_flight(const std::vector<PipelineAction>& actions) {
  using Kind = PipelineAction::Kind;
  int in_flight = 0, peak = 0;
  for (const auto& action : actions) {
    if (action.kind == Kind::kForward) peak = std::max(peak, ++in_flight);
    if (action.kind == Kind::kBackward || action.kind == Kind::kBackwardWeight) --in_flight;
  }
  return peak;
}

int warmup_forwards(const std::vector<PipelineAction>& actions) {
  int count = 0;
  for (const auto& action : actions) {
    if (action.kind == PipelineAction::Kind::kForward) ++count;
    if (action.carries_gradient()) break;
  }
  return count;
}

}  // namespace runtime
