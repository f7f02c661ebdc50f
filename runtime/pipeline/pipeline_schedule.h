// A pipeline schedule as data: for every pipeline rank, the list of actions it runs in one
// iteration -- forward (F), full backward (B), backward of the input alone (I), backward of the
// weights (W), and the sends and receives between stages -- per micro-batch and per stage.
// The model is cut into `stages` contiguous stages ("chunks"); a rank may run several of them
// (interleaved 1F1B, ZB-V). The runtime executes these lists, the simulator times them and
// `harness run --dry-run` prints them: one list, three readers.
//
// Actions print in torch.distributed.pipelining's notation, [stage][type][micro-batch]: "0F0",
// "3I2", "1W0", "2SEND_F1", "1RECV_B3" -- the cells of its schedule CSV (schedule_csv.h).
#pragma once

#include <string>
#include <vector>

namespace runtime {

// The generated schedules (kCsv: read from a CSV, schedule_csv.h).
//   gpipe            - every forward, then every backward (GPipe).
//   dapple           - early backward, 1F1B (DAPPLE, PipeDream-flush): stage s of p runs
//                      min(p - s - 1, m) warm-up forwards, then one forward one backward.
//   interleaved_1f1b - Megatron's interleaved 1F1B over v stages per rank (stage c on rank
//                      c mod p), depth first, as torch's ScheduleInterleaved1F1B orders it.
//   zb_h1            - 1F1B with the backward split into I and W; rank r defers r W's into the
//                      cool-down (Qi et al. 2024's ZB-H1, torch's ScheduleInterleavedZeroBubble
//                      at one stage per rank): peak p micro-batches in flight on every rank.
//   zbv              - ZB-V: two stages per rank in a V (rank r holds stages r and 2p-1-r),
//                      as torch's ScheduleZBVZeroBubble orders it.
enum class PipelineSchedule { kDapple, kGpipe, kInterleaved1F1B, kZbH1, kZbv, kCsv };

// "dapple" | "gpipe" | "interleaved_1f1b" | "zb_h1" | "zbv" | "csv"; throws std::invalid_argument
// otherwise.
PipelineSchedule parse_pipeline_schedule(const std::string& name);
std::string to_string(PipelineSchedule schedule);
// The names a spec may give (without "csv", which `schedule_csv:` selects).
const std::vector<std::string>& pipeline_schedule_names();
// gpipe, dapple and zb_h1: one stage per rank (a plan's stages can run under them).
bool runs_one_stage_per_rank(PipelineSchedule schedule);
// zb_h1 and zbv: every stage's backward split into I and W (a CSV schedule's rows may split it).
bool splits_every_backward(PipelineSchedule schedule);

struct PipelineAction {
  enum class Kind {
    kForward,
    kBackward,        // input and weight gradients at once
    kBackwardInput,   // the input gradient alone; the graph is kept for W
    kBackwardWeight,  // the weight gradients, after the stage's I of the micro-batch
    kSendActivations,
    kRecvActivations,
    kSendGradients,
    kRecvGradients,
  };
  Kind kind = Kind::kForward;
  int stage = 0;  // the model's stage (chunk) index, 0-based over all ranks' stages
  int micro_batch = 0;
  bool operator==(const PipelineAction&) const = default;
  bool is_compute() const;
  // F, B or I: an action that ends a micro-batch's pass through the stage in its direction.
  bool carries_gradient() const { return kind == Kind::kBackward || kind == Kind::kBackwardInput; }
};

struct ScheduleTable {
  PipelineSchedule schedule = PipelineSchedule::kDapple;
  int ranks = 1;          // pipeline ranks (positions; each may have data-parallel replicas)
  int stages = 1;         // stages the model is cut into: ranks x stages per rank
  int micro_batches = 1;  // per iteration
  std::vector<int> rank_of_stage;                    // [stage] -> pipeline rank
  std::vector<std::vector<PipelineAction>> actions;  // [rank], in order

  int stages_per_rank() const { return stages / ranks; }
  std::vector<int> stages_of(int rank) const;  // in stage order
};

// Stage placements: loop (stage c on rank c mod p: interleaved) and V (ZB-V).
std::vector<int> loop_placement(int ranks, int stages_per_rank);
std::vector<int> v_placement(int ranks);

// The compute actions (F, B, I, W) of a generated schedule, per rank. Throws
// std::invalid_argument when the schedule does not take these counts (zbv needs 2 stages per
// rank, gpipe, dapple and zb_h1 one; interleaved_1f1b needs m a multiple of max(1, m / p)).
ScheduleTable make_schedule(PipelineSchedule schedule, int ranks, int stages_per_rank,
                            int micro_batches);

// The same table with the sends and receives between ranks made explicit (how the runtime posts
// them): a send right after the action that made it, a receive one compute action ahead of the
// action that needs it -- before the action before it -- so that the hand-over (a rendezvous:
// Gloo moves the data once the receive is posted) crosses while the rank computes. Stages on
// one rank hand over in memory, without either.
ScheduleTable with_communication(const ScheduleTable& compute);

// "0F0", "1SEND_B3" (torch.distributed.pipelining's notation).
std::string to_string(const PipelineAction& action);
// "0F0 0F1 1F0 ..." -- one rank's list.
std::string describe_actions(const std::vector<PipelineAction>& actions);

// Largest number of micro-batches (over all of the rank's stages) forwarded and not yet through
// their last backward (B, or W after I): how many micro-batches' activations the rank holds.
int peak_in_flight(const std::vector<PipelineAction>& actions);
// Forwards before the first backward.
int warmup_forwards(const std::vector<PipelineAction>& actions);

// How many actions of each compute kind a list holds: F, B run whole, I and W.
struct ComputeActionCounts {
  int forwards = 0, fulls = 0, inputs = 0, weights = 0;
};
ComputeActionCounts count_compute_actions(const std::vector<PipelineAction>& actions);

}  // namespace runtime
