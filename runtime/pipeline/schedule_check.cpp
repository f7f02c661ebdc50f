#include "runtime/pipeline/schedule_check.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

namespace runtime {

namespace {

using Kind = PipelineAction::Kind;

// What has happened to a (stage, micro-batch): its forward, its input gradient (B or I), its
// weight gradients (B or W).
enum class Pass { kForward = 0, kGradient = 1, kWeight = 2 };
using PassKey = std::tuple<Pass, int, int>;  // pass, stage, micro-batch

std::string pass_name(Pass pass) {
  return pass == Pass::kForward ? "forward" : pass == Pass::kGradient ? "backward" : "W";
}

// The passes an action must wait for (other than the actions before it on its rank).
std::vector<PassKey> inputs_of(const PipelineAction& a, int stages) {
  const int c = a.stage, m = a.micro_batch;
  switch (a.kind) {
    case Kind::kForward:
      if (c == 0) return {};
      return {{Pass::kForward, c - 1, m}};
    case Kind::kBackward:
    case Kind::kBackwardInput:
      if (c + 1 == stages) return {{Pass::kForward, c, m}};
      return {{Pass::kForward, c, m}, {Pass::kGradient, c + 1, m}};
    case Kind::kBackwardWeight:
      return {{Pass::kGradient, c, m}};
    default:
      return {};
  }
}

// The structural rules, action by action: in range, on its own rank, each pass once and in order.
void check_structure(const ScheduleTable& t) {
  if (static_cast<int>(t.rank_of_stage.size()) != t.stages) {
    throw ScheduleError(0, 0, "-",
                        "the schedule places " + std::to_string(t.rank_of_stage.size()) +
                            " stages, not " + std::to_string(t.stages));
  }
  for (int c = 0; c < t.stages; ++c) {
    if (t.rank_of_stage[c] < 0 || t.rank_of_stage[c] >= t.ranks) {
      throw ScheduleError(0, 0, "-",
                          "stage " + std::to_string(c) + " is placed on rank " +
                              std::to_string(t.rank_of_stage[c]) + " of " +
                              std::to_string(t.ranks));
    }
  }
  for (int r = 0; r < t.ranks; ++r) {
    if (t.stages_of(r).empty()) throw ScheduleError(r, 0, "-", "the rank holds no stage");
    std::map<PassKey, bool> seen;
    const auto& list = t.actions[r];
    for (int k = 0; k < static_cast<int>(list.size()); ++k) {
      const PipelineAction& a = list[k];
      if (!a.is_compute()) continue;
      const auto fail = [&](const std::string& what) {
        throw ScheduleError(r, k, to_string(a), what);
      };
      const std::string of = " of micro-batch " + std::to_string(a.micro_batch) + " of stage " +
                             std::to_string(a.stage);
      if (a.stage < 0 || a.stage >= t.stages) {
        fail("stage " + std::to_string(a.stage) + " is outside the " + std::to_string(t.stages) +
             " stages");
      }
      if (a.micro_batch < 0 || a.micro_batch >= t.micro_batches) {
        fail("micro-batch " + std::to_string(a.micro_batch) + " is outside the " +
             std::to_string(t.micro_batches) + " micro-batches");
      }
      if (t.rank_of_stage[a.stage] != r) {
        fail("stage " + std::to_string(a.stage) + " runs on rank " +
             std::to_string(t.rank_of_stage[a.stage]));
      }
      const auto key = [&](Pass p) { return PassKey{p, a.stage, a.micro_batch}; };
      const bool forwarded = seen.count(key(Pass::kForward)) > 0;
      const bool input_done = seen.count(key(Pass::kGradient)) > 0;
      const bool weight_done = seen.count(key(Pass::kWeight)) > 0;
      if (a.kind == Kind::kForward) {
        if (forwarded) fail("a second forward" + of);
        seen[key(Pass::kForward)] = true;
      } else if (a.kind == Kind::kBackwardWeight) {
        if (!input_done) fail("the W" + of + " comes before its I");
        if (weight_done) fail("a second W" + of);
        seen[key(Pass::kWeight)] = true;
      } else {
        if (!forwarded) fail("the backward" + of + " comes before its forward");
        if (input_done) fail("a second backward" + of);
        seen[key(Pass::kGradient)] = true;
        if (a.kind == Kind::kBackward) seen[key(Pass::kWeight)] = true;
      }
    }
    for (int c : t.stages_of(r)) {
      for (int m = 0; m < t.micro_batches; ++m) {
        for (Pass p : {Pass::kForward, Pass::kGradient, Pass::kWeight}) {
          if (seen.count({p, c, m}) == 0) {
            throw ScheduleError(r, static_cast<int>(list.size()), "end",
                                "micro-batch " + std::to_string(m) + " of stage " +
                                    std::to_string(c) + " has no " + pass_name(p));
          }
        }
      }
    }
  }
}

double cost_of(const PipelineAction& a, const StageCosts& c) {
  switch (a.kind) {
    case Kind::kForward:
      return c.forward;
    case Kind::kBackward:
      return c.backward_input + c.backward_weight;
    case Kind::kBackwardInput:
      return c.backward_input;
    case Kind::kBackwardWeight:
      return c.backward_weight;
    default:
      return 0;
  }
}

}  // namespace

ScheduleError::ScheduleError(int rank, int step, const std::string& action, const std::string& what)
    : std::invalid_argument("rank " + std::to_string(rank) + ", step " + std::to_string(step) +
                            " (" + action + "): " + what),
      rank_(rank),
      step_(step) {}

double ScheduleTimes::bubble_fraction(int rank) const {
  return makespan > 0 ? 1.0 - busy[rank] / makespan : 0.0;
}

double ScheduleTimes::mean_bubble_fraction() const {
  double sum = 0;
  for (size_t r = 0; r < busy.size(); ++r) sum += bubble_fraction(static_cast<int>(r));
  return busy.empty() ? 0.0 : sum / static_cast<double>(busy.size());
}

ScheduleTimes time_schedule(const ScheduleTable& t, const std::vector<StageCosts>& costs) {
  check_structure(t);
  if (static_cast<int>(costs.size()) != t.stages) {
    throw std::invalid_argument("time_schedule needs one cost per stage");
  }
  ScheduleTimes times;
  times.busy.assign(t.ranks, 0.0);
  times.start.assign(t.ranks, {});
  times.end.assign(t.ranks, {});
  std::map<PassKey, double> done;  // when each pass finished
  std::vector<size_t> next(t.ranks, 0);
  std::vector<double> clock(t.ranks, 0.0);
  const auto finished = [&] {
    for (int r = 0; r < t.ranks; ++r) {
      if (next[r] < t.actions[r].size()) return false;
    }
    return true;
  };
  while (!finished()) {
    bool moved = false;
    for (int r = 0; r < t.ranks; ++r) {
      const auto& list = t.actions[r];
      for (; next[r] < list.size(); ++next[r]) {
        const PipelineAction& a = list[next[r]];
        if (!a.is_compute()) continue;
        double ready = clock[r];
        bool blocked = false;
        for (const PassKey& input : inputs_of(a, t.stages)) {
          const auto found = done.find(input);
          if (found == done.end()) {
            blocked = true;
            break;
          }
          ready = std::max(ready, found->second);
        }
        if (blocked) break;
        const double end = ready + cost_of(a, costs[a.stage]);
        times.start[r].push_back(ready);
        times.end[r].push_back(end);
        times.busy[r] += end - ready;
        clock[r] = end;
        const int c = a.stage, m = a.micro_batch;
        if (a.kind == Kind::kForward) done[{Pass::kForward, c, m}] = end;
        if (a.carries_gradient()) done[{Pass::kGradient, c, m}] = end;
        if (a.kind == Kind::kBackward || a.kind == Kind::kBackwardWeight) {
          done[{Pass::kWeight, c, m}] = end;
        }
        moved = true;
      }
    }
    if (moved) continue;
    // Every unfinished rank waits: name the first and what it waits for.
    for (int r = 0; r < t.ranks; ++r) {
      if (next[r] >= t.actions[r].size()) continue;
      const PipelineAction& a = t.actions[r][next[r]];
      std::string waits;
      for (const auto& [pass, c, m] : inputs_of(a, t.stages)) {
        if (done.count({pass, c, m}) != 0) continue;
        waits = "the " + pass_name(pass) + " of micro-batch " + std::to_string(m) + " of stage " +
                std::to_string(c) + " (rank " + std::to_string(t.rank_of_stage[c]) + ")";
        break;
      }
      throw ScheduleError(r, static_cast<int>(next[r]), to_string(a),
                          "waits for " + waits + ", which waits in turn: the schedule deadlocks");
    }
  }
  for (int r = 0; r < t.ranks; ++r) {
    if (!times.end[r].empty()) times.makespan = std::max(times.makespan, times.end[r].back());
  }
  return times;
}

ScheduleTimes time_schedule(const ScheduleTable& table, const StageCosts& every_stage) {
  return time_schedule(table, std::vector<StageCosts>(table.stages, every_stage));
}

void validate_schedule(const ScheduleTable& table) { time_schedule(table); }

}  // namespace runtime
