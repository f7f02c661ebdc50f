// Runs one rank's pipeline stage: the rank's contiguous layers of the model, fed by the
// previous stage's activations and feeding the next stage, over point-to-point send/recv on
// the world communicator, micro-batch by micro-batch in the order of a PipelineSchedule.
// After the last backward, the stage's gradients are summed over its replicas by the
// GradientSync the caller supplies (the rank program uses baselines/ddp's bucketed reducer). The
// optimizer step is the caller's (on stage_parameters()).
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
  double forward_ms = 0;    // forward compute, summed over micro-batches
  double backward_ms = 0;   // backward compute, summed over micro-batches
  double recv_wait_ms = 0;  // blocked receiving activations or gradients
  double send_ms = 0;       // posting sends plus the final wait for them
  double allreduce_ms = 0;  // the replicas' gradient all-reduce
  double span_ms = 0;       // first action to all-reduce done
  long long bytes_sent = 0;
  int peak_in_flight = 0;  // micro-batches forwarded and not yet backwarded, at most
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

  std::vector<at::Tensor> stage_parameters() const;
  std::vector<std::string> stage_parameter_names() const;
  int stage() const { return stage_; }
  int replica() const { return replica_; }
  const std::vector<PipelineAction>& schedule() const { return actions_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int stage_ = 0;
  int replica_ = 0;
  std::vector<PipelineAction> actions_;
};

}  // namespace runtime
