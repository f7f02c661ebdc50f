// The order in which one pipeline stage runs the forward and backward passes of an
// iteration's micro-batches. A schedule is plain data so tests (and `harness run --dry-run`
// users) can print it and check it.
//   gpipe  - every forward, then every backward (GPipe): all micro-batches' activations are
//            stashed at once.
//   dapple - early backward (DAPPLE, PipeDream-flush's 1F1B): stage s of S runs
//            min(S - s - 1, M) warm-up forwards, then alternates one forward and one backward,
//            then drains the remaining backwards; at most S - s micro-batches are in flight.
#pragma once

#include <string>
#include <vector>

namespace runtime {

enum class PipelineSchedule { kDapple, kGpipe };

// "dapple" | "gpipe"; throws std::invalid_argument otherwise.
PipelineSchedule parse_pipeline_schedule(const std::string& name);
std::string to_string(PipelineSchedule schedule);

struct PipelineAction {
  enum class Kind { kForward, kBackward };
  Kind kind;
  int micro_batch;
  bool operator==(const PipelineAction&) const = default;
};

// The actions of `stage` (0-based) of a `stages`-stage pipeline over `micro_batches`
// micro-batches. Every micro-batch appears once as a forward and once, later, as a backward.
std::vector<PipelineAction> make_stage_schedule(PipelineSchedule schedule, int stages, int stage,
                                                int micro_batches);

// Forwards run before the first backward.
int warmup_forwards(const std::vector<PipelineAction>& actions);

// Largest number of micro-batches forwarded but not yet backwarded at any point: how many
// micro-batches' activations the stage holds at once.
int peak_in_flight(const std::vector<PipelineAction>& actions);

// "F0 F1 B0 F2 B1 B2".
std::string describe_schedule(const std::vector<PipelineAction>& actions);

}  // namespace runtime
