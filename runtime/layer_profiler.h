// Per-layer forward and backward times of a model, the inputs of the DAPPLE planner and the
// simulator. Torch-free header: the CLI includes it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace runtime {

struct LayerProfileRequest {
  std::string model;        // a zoo model name, or "" with `torchscript`
  std::string torchscript;  // a TorchScript module whose top-level children run in sequence
  int64_t batch = 32;
  std::vector<int64_t> input_shape;  // empty: the model's default
  int64_t num_classes = 0;
  int64_t depth = 0;  // zoo size knobs (ModelOptions): 0 = the model's default
  int64_t width = 0;
  int repetitions = 10;  // timed runs per layer; the median is reported
  int warmup = 2;
  int threads = 1;
  int64_t seed = 0;
  // Called before every timed forward, backward and step. Co-located profiling passes a
  // barrier shared by N copies of the same profile, so that every copy times the same work
  // at the same moment -- as the N data-parallel ranks of one host run the same layers.
  std::function<void()> before_timed_run;
};

struct TimingStats {
  double median_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
};

struct LayerTiming {
  std::string name;
  std::string kind;
  TimingStats forward;
  TimingStats backward;
  int64_t activation_bytes = 0;  // the layer's output
  int64_t parameter_bytes = 0;
};

struct LayerProfileResult {
  std::string model;
  int64_t batch = 0;
  std::vector<int64_t> input_shape;
  int64_t input_bytes = 0;
  int repetitions = 0;
  int threads = 0;
  std::vector<LayerTiming> layers;
  // The whole model, forward (with the MSE loss) and backward, timed the same way: what the
  // per-layer sums should add up to.
  TimingStats whole_forward;
  TimingStats whole_backward;
  // The optimizer step after that backward: SGD (no momentum, the specs' default) over all
  // parameters and zeroing their gradients, as a rank worker's step phase counts them; the
  // simulator's `step_ms` when not set in the spec.
  TimingStats whole_step;
};

// Runs the model on CPU on synthetic data; throws std::invalid_argument on a bad request.
LayerProfileResult profile_layers(const LayerProfileRequest& request);

// A barrier for `ranks` co-located profiles (`rank` 0 serves a TCP store on 127.0.0.1:port):
// each call returns once every rank has made the same call. Throws after `timeout_s` without
// the others (a copy that died).
std::function<void()> make_lockstep_barrier(int port, int rank, int ranks, double timeout_s = 120);

}  // namespace runtime
