// Whether a schedule can run, and how long it takes when it does. The check runs every rank's
// list against the pipeline's data dependencies: a forward of stage c needs stage c-1's forward
// of the micro-batch, a backward (B or I) of stage c needs stage c+1's (the last stage: its own
// forward), a W its stage's I. Sends never block (the runtime posts them and waits at the end of
// the iteration), a receive blocks until its sender has run: so a rank stops only at an action
// whose input is not made yet, and a schedule deadlocks exactly when every unfinished rank stops.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/pipeline/pipeline_schedule.h"

namespace runtime {

// "rank 1, step 4 (1B2): ..." -- the rank and the 0-based position in its list.
class ScheduleError : public std::invalid_argument {
 public:
  ScheduleError(int rank, int step, const std::string& action, const std::string& what);
  int rank() const { return rank_; }
  int step() const { return step_; }

 private:
  int rank_, step_;
};

// Throws ScheduleError unless every stage's every micro-batch is forwarded once and then
// backwarded once (B, or I then W) on the rank that holds the stage, and the lists run to the
// end without a deadlock.
void validate_schedule(const ScheduleTable& table);

// A stage's compute times (any unit): B costs I + W.
struct StageCosts {
  double forward = 1;
  double backward_input = 1;
  double backward_weight = 1;
};

struct ScheduleTimes {
  double makespan = 0;       // first action to last, over every rank
  std::vector<double> busy;  // per rank: the time of its compute actions
  // Per rank and compute action (in list order): when it started and ended.
  std::vector<std::vector<double>> start, end;
  // The rank's idle share of the makespan.
  double bubble_fraction(int rank) const;
  double mean_bubble_fraction() const;
};

// The lists run with these compute costs (per stage) and free communication: each action as
// early as its rank and its inputs allow. Throws ScheduleError on a deadlock.
ScheduleTimes time_schedule(const ScheduleTable& table, const std::vector<StageCosts>& costs);

// The same with one cost for every stage: the schedule's own bubble at F = `forward` and so on.
ScheduleTimes time_schedule(const ScheduleTable& table, const StageCosts& every_stage = {});

}  // namespace runtime
