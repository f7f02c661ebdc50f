// One simulated iteration of a system: its task graph, when each task ran, and the per-rank
// phase times written to the results folder like a real rank's samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/seeded_random.h"
#include "simulator/engine.h"
#include "simulator/task_graph.h"

namespace harness::simulator {

// The phases of a rank, in milliseconds, as a real rank reports them (experiments/README.md):
// forward = its forward compute, step = its optimizer step, iteration = the iteration's
// makespan (every rank starts at 0 and a synchronous iteration ends when the last rank is
// done), backward = the rest: backward compute plus waits for communication and pipeline
// bubbles -- the way a rank that times "backward" around its backward pass and gradient
// reduction would see it.
struct RankPhases {
  double forward_ms = 0, backward_ms = 0, step_ms = 0, iteration_ms = 0;
};

struct SimulatedIteration {
  TaskGraph graph{1};
  TaskTimes times;
  std::vector<RankPhases> ranks;
  // Pipeline systems: the stage of every rank (-1: in no stage) and the schedule's name.
  std::vector<int> stage_of_rank;
  std::string schedule;
};

std::vector<RankPhases> rank_phases(const TaskGraph& graph, const TaskTimes& times);

// Seeded multiplicative noise on compute times: each compute task's seconds are scaled by a
// factor uniform in [1 - fraction, 1 + fraction), drawn in task creation order (SplitMix64,
// the same numbers on every platform).
class ComputeNoise {
 public:
  ComputeNoise() : random_(0) {}
  ComputeNoise(double fraction, std::uint64_t seed) : fraction_(fraction), random_(seed) {}
  double apply(double seconds) {
    if (fraction_ <= 0) return seconds;
    return seconds * random_.uniform(1.0 - fraction_, 1.0 + fraction_);
  }

 private:
  double fraction_ = 0.0;
  SeededRandom random_;
};

}  // namespace harness::simulator
