// Runs one rank's part of a pipeline: its stages (one, or several for interleaved and ZB-V
// schedules), each a contiguous range of the model's layers fed by the previous stage's
// activations and feeding the next, over point-to-point send/recv on the world communicator
// (stages on the same rank hand over in memory), action by action in the order of the rank's
// list in the schedule (layout_schedule.h). A stage whose list splits its backward into I and W
// cuts its autograd graph at every layer: I differentiates each layer's output with respect to
// its input alone, keeping the graph, and W runs the layer's weight nodes alone from the
// gradients I passed them (weight_pass.h). After the last action, the rank's gradients are summed
// over its replicas by the GradientSync the caller supplies (the rank program uses baselines/ddp's
// bucketed reducer). The optimizer step is the caller's (on stage_parameters()).
//
// Gradient scaling: the last stage weights each micro-batch's loss by its rows' share of the
// global batch (rows / global_batch), so the gradients summed over micro-batches and replicas
// equal single-process training on the whole global batch with a mean loss.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/comm/gradient_sync.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/precision.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/pipeline/pipeline_schedule.h"
#include "runtime/protocol/trace_recorder.h"

namespace runtime {

struct PipelineOptions {
  PipelineLayout layout;
  PipelineSchedule schedule = PipelineSchedule::kDapple;
  std::string schedule_csv;  // the CSV's text, for PipelineSchedule::kCsv
  int micro_batches = 1;
  std::string loss = "mse";  // mse | cross_entropy
  // Sums a stage's gradients over its replicas after the last backward (the sum, not the
  // average: each micro-batch's loss is already weighted by its share of the global batch).
  // Required when a stage has more than one replica.
  GradientSyncFactory replica_sync;
  // Forward (and the loss) under this autocast; boundary tensors travel in the dtype it gives.
  Precision precision = Precision::kFp32;
  // Where the stage's layers, its inputs and the boundary tensors it receives live. On a GPU
  // the stage waits for its stream at the end of each forward and backward, so that the host
  // clock (phases, trace) times the kernels rather than their launch.
  c10::Device device = c10::Device(c10::kCPU);
  // A stage holding mixture-of-experts layers adds their load-balancing loss, times this weight
  // and the micro-batch's share of the global batch, to what it differentiates (0: none).
  double auxiliary_loss_weight = 0.0;
};

// What one iteration cost this rank (milliseconds of wall time on the monotonic clock).
struct PipelineIterationStats {
  // This replica's share of the global mean loss (the last stage's task loss; every stage's
  // weighted balancing loss): summed over every rank, the loss one process computes.
  double loss = 0;
  double forward_ms = 0;          // forward compute, summed over micro-batches
  double backward_ms = 0;         // backward compute (B, I and W), summed over micro-batches
  double backward_weight_ms = 0;  // of which W
  double recv_wait_ms = 0;        // blocked receiving activations or gradients
  double send_ms = 0;             // posting sends plus the final wait for them
  double allreduce_ms = 0;        // the replicas' gradient all-reduce
  double span_ms = 0;             // first action to all-reduce done
  // The steady clock (microseconds) at the first action, at the start of the first compute (its
  // input received) and at the end of the last: the part of the iteration the schedule's bubble
  // is a share of runs from the earliest rank's first compute to the latest's last.
  double actions_start_us = 0;
  double compute_start_us = 0;
  double compute_end_us = 0;
  long long bytes_sent = 0;
  // Micro-batches (over the rank's stages) forwarded and not yet through their last backward
  // (B, or W after I), at most.
  int peak_in_flight = 0;
  // Bytes of the stage's boundary tensors (received inputs, outputs) kept for backward, peak.
  long long peak_boundary_bytes = 0;
  // Peak memory allocated on the stage's device by this thread during the iteration above its
  // start: the activations autograd stashes for in-flight micro-batches plus transient buffers
  // (on a GPU, not the host copies Gloo sends from).
  long long peak_allocated_bytes = 0;
};

class PipelineStage {
 public:
  // `model` is the whole model (built identically on every rank); this rank runs the layers
  // of its stage. `replicas` is the communicator of the stage's replicas (null when the stage
  // has one). `sample_input` is one sample ([1, ...]) used to infer boundary shapes, run through
  // the model on options.device (autocast's dtypes differ between devices): the whole model is
  // there while the stage is built; afterwards only the stage's layers need to be.
  PipelineStage(ZooModel& model, PipelineOptions options, Communicator& world,
                Communicator* replicas, const at::Tensor& sample_input);
  ~PipelineStage();
  PipelineStage(const PipelineStage&) = delete;
  PipelineStage& operator=(const PipelineStage&) = delete;

  // One iteration's forwards, backwards and gradient all-reduce. `global_input` and
  // `global_target` are the whole global batch (every rank holds the same; each takes its rows).
  PipelineIterationStats run_iteration(const at::Tensor& global_input,
                                       const at::Tensor& global_target, TraceRecorder& trace);

  // The parameters of every stage the rank serves, in stage order.
  std::vector<at::Tensor> stage_parameters() const;
  std::vector<std::string> stage_parameter_names() const;
  int stage() const { return stages_.front(); }  // the first stage the rank serves
  const std::vector<int>& stages() const { return stages_; }
  int position() const { return position_; }  // the rank's pipeline position
  int replica() const { return replica_; }
  // The whole schedule with its sends and receives; this rank runs actions[position()].
  const ScheduleTable& schedule() const { return table_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<int> stages_;
  int position_ = 0;
  int replica_ = 0;
  ScheduleTable table_;
};

}  // namespace runtime
