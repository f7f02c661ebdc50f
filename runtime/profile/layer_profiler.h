// Per-layer forward and backward times of a model, the inputs of the DAPPLE planner and the
// simulator. Torch-free header: the CLI includes it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/models/model_catalog.h"

namespace runtime {

struct LayerProfileRequest {
  std::string model;        // a zoo model name, or "" with `torchscript`
  std::string torchscript;  // a TorchScript module whose top-level children run in sequence
  int64_t batch = 32;
  std::vector<int64_t> input_shape;  // empty: the model's default
  int64_t num_classes = 0;
  int64_t depth = 0;  // zoo size knobs (ModelOptions): 0 = the model's default
  int64_t width = 0;
  MoeShape moe;          // mixture-of-experts models
  DecoderShape decoder;  // llama
  // Above 1: slice 0 of each layer a tensor axis of this degree splits (llama, bert), its
  // collectives left out (runtime/parallel/peerless_group.h): what a tensor-parallel rank
  // computes, without sequence parallelism. Parameter bytes are the slice's.
  int tensor = 1;
  // With `tensor`: llama's embedding and head split by vocabulary rows too (the slice's share
  // of them timed: runtime/parallel/vocabulary_parallel.h).
  bool vocabulary_parallel = false;
  // llama and bert: the blocks recomputed as a run with `model.activation_checkpointing` recomputes
  // them (runtime/models/activation_checkpoint.h), so that each such block's backward holds its
  // recomputation: "full" (the first of each `recompute_every` blocks keeps only its input and
  // runs its forward again), "selective" (every block's attention core), or "none".
  std::string activation_checkpointing = "none";
  int64_t recompute_every = 1;
  // The optimizer the step is timed with: "sgd" (no momentum, the specs' default) or "adamw".
  std::string optimizer = "sgd";
  int repetitions = 10;  // timed runs per layer; the median is reported
  int warmup = 2;
  int threads = 1;
  int64_t seed = 0;
  // Time with the process's CPU clock (core-milliseconds of every thread) instead of the
  // monotonic wall clock: for a profile measured with more processes than the host has cores,
  // whose wall times would include waiting for a core. The simulator time-shares a machine's
  // cores itself (cluster.cpu_cores), so it wants the work, not the wait.
  bool cpu_clock = false;
  // The layers timed, as chain indexes (inclusive; last_layer -1: to the model's end): a
  // pipeline stage's range. The layers before it run once, untimed, to make its input, which
  // then needs a gradient as a stage's received activation does; the "whole" timings are the
  // range's, and the loss is only computed by a range that ends the model.
  int first_layer = 0;
  int last_layer = -1;
  // Called before every timed forward, backward and step. Co-located profiling passes a
  // barrier shared by N copies of the same profile, so that every copy times the same work
  // at the same moment -- as the N data-parallel ranks of one host run the same layers.
  std::function<void()> before_timed_run;
  // Called once after the warm-up runs: a stage profile's processes start timing together.
  std::function<void()> after_warmup;
  // Called after the timed runs and after every untimed run since; while it returns true,
  // another untimed run (the same work) follows. A stage profile keeps a finished stage busy
  // until every stage has finished, so that each is timed beside the others running, as a
  // pipeline's stages run on the host's other cores.
  std::function<bool()> keep_running;
  // Idle gaps, in milliseconds, after which the range's forward and backward are timed again
  // (LayerProfileResult::after_idle): a pipeline stage on a slow link computes after waiting
  // in a receive, and a host's caches and clock are no longer warm then. Empty: not measured.
  std::vector<double> idle_gaps_ms;
  // Also time each layer's backward split as the zero-bubble schedules run it
  // (runtime/pipeline/weight_pass.h): its input's gradient (I) and then its weights' (W), each
  // on its own (LayerTiming::backward_input, backward_weight).
  bool split_backward = false;
};

struct TimingStats {
  double median_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
};

// The range's forward and then its backward, timed after the process slept `gap_ms` once the
// previous (untimed) pass ended; gap 0 is the same pass back to back, the others' baseline.
struct AfterIdleTiming {
  double gap_ms = 0;
  TimingStats forward;
  TimingStats backward;
};

// A layer holding mixtures of experts (runtime/models/moe.h): what expert parallelism keeps on
// one rank and sends between them, from the profiled forward.
struct LayerMixtures {
  int count = 0;                       // mixtures in the layer
  int64_t experts = 0;                 // each mixture's
  int64_t expert_parameter_bytes = 0;  // of all their experts (parameter_bytes holds them too)
  // The token rows one dispatch sends to the experts, all the layer's mixtures together: each
  // token's choices within its expert's capacity, at the profile batch. A combine sends them
  // back; their gradients travel the same way in backward.
  int64_t dispatch_bytes = 0;
};

struct LayerTiming {
  std::string name;
  std::string kind;
  TimingStats forward;
  TimingStats backward;
  // Where the request split the backward: I and W, each timed apart; a layer without weights is
  // all I, one whose input needs no gradient (the model's first trainable one) all W.
  std::optional<TimingStats> backward_input, backward_weight;
  int64_t activation_bytes = 0;  // the layer's output
  int64_t parameter_bytes = 0;
  // What its forward keeps for its backward, with its output: the bytes its forward leaves
  // allocated, measured by the allocator (`harness profile estimate` counts them); unset in a
  // profile.json of before.
  std::optional<int64_t> stored_bytes;
  // Where the backward was split: what its I leaves allocated until W, beyond stored_bytes (the
  // gradients W reads: its weight nodes' incoming ones), by the allocator; 0 for a layer whose
  // backward is all I or all W.
  std::optional<int64_t> weight_pending_bytes;
  std::optional<int64_t> backward_working_bytes;
  std::optional<LayerMixtures> mixtures;  // unset: none in the layer
};

struct LayerProfileResult {
  std::string model;
  int64_t batch = 0;
  std::vector<int64_t> input_shape;
  int64_t input_bytes = 0;
  int repetitions = 0;
  int threads = 0;
  int tensor = 1;                    // LayerProfileRequest::tensor: the slice's degree
  bool vocabulary_parallel = false;  // LayerProfileRequest::vocabulary_parallel
  std::string optimizer = "sgd";     // the step's
  int first_layer = 0;               // chain index of layers[0]
  int chain_layers = 0;              // the model's layers, timed or not
  int untimed_runs = 0;              // runs after the timed ones, while `keep_running` said so
  // LayerProfileRequest's activation_checkpointing and recompute_every.
  std::string activation_checkpointing = "none";
  int64_t recompute_every = 1;
  std::vector<LayerTiming> layers;
  // The whole model (or the layer range), forward (with the MSE loss where it ends the model)
  // and backward, timed the same way: what the per-layer sums should add up to.
  TimingStats whole_forward;
  TimingStats whole_backward;
  // The optimizer step after that backward (the request's optimizer) over the timed layers'
  // parameters and zeroing their gradients, as a rank worker's step phase counts
  // them; the simulator's `step_ms` when not set in the spec.
  TimingStats whole_step;
  // Per requested idle gap, after gap 0 (LayerProfileRequest::idle_gaps_ms); empty where not
  // measured.
  std::vector<AfterIdleTiming> after_idle;
};

// Runs the model on CPU on synthetic data; throws std::invalid_argument on a bad request.
LayerProfileResult profile_layers(const LayerProfileRequest& request);

// What profile_layers would refuse, found before anything is written: a TorchScript file that
// is not there or not a module, a model that does not build, and an input shape or batch its
// layers do not take (one forward pass of the batch, without gradients). Throws
// std::invalid_argument with the reason.
void check_profile_request(const LayerProfileRequest& request);

// Where a profile's processes meet: process 0 serves a TCP store on 127.0.0.1:port, and they keep
// their entries under `key` (harness::new_rendezvous_key(); empty: none), since a port picked
// free can be picked by another profile started at the same moment.
struct ProfileMeeting {
  int port = 0;
  std::string key;
};

// A barrier for `ranks` co-located profiles (`rank` 0 serves the meeting's store): each call
// returns once every rank has made the same call. Throws after `timeout_s` without the others
// (a copy that died).
std::function<void()> make_lockstep_barrier(const ProfileMeeting& meeting, int rank, int ranks,
                                            double timeout_s = 120);

// The same barrier, and the way back for what the copies measured: each of the `ranks`
// processes calls `gather` once with its result; process 0's call returns every process's
// result by rank (its own first) once all have posted theirs, the others' an empty list.
struct LockstepMeeting {
  std::function<void()> barrier;
  std::function<std::vector<std::string>(const std::string&)> gather;
};
LockstepMeeting make_lockstep_meeting(const ProfileMeeting& meeting, int rank, int ranks,
                                      double timeout_s = 120);

// The hooks of one process of a stage profile: `stages` stages of `replicas` processes each,
// process `process` running stage process / replicas (process 0 serves the meeting's store).
// `start` waits for every process (after its warm-up); `keep_running` marks this process finished
// on its first call and then says whether another one still times its layers; `before_timed_run`
// (replicas > 1) holds a stage's replicas in lockstep, as a data-parallel stage's ranks run the
// same micro-batches at the same moment, until this process has finished (its untimed runs need no
// partner, and its replicas may make a different number of them).
struct StageProfileSync {
  std::function<void()> start;
  std::function<bool()> keep_running;
  std::function<void()> before_timed_run;
};
StageProfileSync make_stage_profile_sync(const ProfileMeeting& meeting, int process, int stages,
                                         int replicas = 1, double timeout_s = 120);

}  // namespace runtime
