// DDP-style gradient synchronisation: after backward, every parameter's .grad() holds the
// average of that gradient over all ranks. Four flavours (see experiments/README.md):
//   overlap    - PyTorch DDP's C++ Reducer: buckets in reverse registration order (1 MiB
//                first bucket), each bucket's all-reduce launched asynchronously, in bucket
//                order, as soon as the autograd hooks have filled it, while backward goes on.
//   sync       - the same buckets, all-reduced one after another once backward finished.
//   async      - buckets in registration order, each launched as soon as it fills, all waited
//                for after backward (compare_ddp's asynchronous Python DDP).
//   per_tensor - one all-reduce per gradient after backward, no buckets.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "baselines/ddp/bucket_assignment.h"
#include "baselines/ddp/power_sgd.h"
#include "runtime/comm/communicator.h"
#include "runtime/comm/gradient_sync.h"
#include "runtime/protocol/trace_recorder.h"

namespace baselines {

enum class SyncMode { kOverlap, kSync, kAsync, kPerTensor };

// "overlap" | "sync" | "async" | "per_tensor"; throws std::invalid_argument otherwise.
SyncMode parse_sync_mode(const std::string& name);
std::string to_string(SyncMode mode);

// What a bucket travels as (PyTorch DDP's compression hooks): fp16/bf16 -- fp32 gradients cast
// to half precision (divided by the world size there, when averaging), all-reduced in it --
// half the bytes on the wire -- and cast back; powersgd -- low-rank factors with error
// feedback (baselines/ddp/power_sgd.h), after warm-up steps of plain all-reduce.
enum class GradientCompression { kNone, kFp16, kBf16, kPowerSgd };
// none | fp16 | bf16 | powersgd
GradientCompression parse_gradient_compression(const std::string& name);
const char* to_string(GradientCompression compression);

struct ReducerOptions {
  SyncMode mode = SyncMode::kOverlap;
  double bucket_mb = 25;
  double first_bucket_mb = 1;
  // true: gradients become the rank average (DDP); false: the rank sum (a pipeline stage's
  // replicas, whose loss is already weighted by each sample's share of the global batch).
  bool average = true;
  GradientCompression compression = GradientCompression::kNone;  // buckets only (not per_tensor)
  PowerSgdOptions power_sgd;                                     // compression: powersgd
};

class GradientReducer : public runtime::GradientSync {
 public:
  // `parameters` in registration order; `names` the same length (for logs). Registers
  // autograd hooks for the modes that overlap communication with backward.
  GradientReducer(std::vector<at::Tensor> parameters, std::vector<std::string> names,
                  runtime::Communicator& communicator, ReducerOptions options);
  ~GradientReducer() override;
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Call after loss.backward(); returns when every gradient holds the rank average.
  void finish_backward() override;

  // Empty for per_tensor.
  const std::vector<Bucket>& buckets() const;

  // Bucket all-reduces are recorded there (from launch to seen done) while it is enabled.
  void set_trace(runtime::TraceRecorder* trace);
  // JSON array: per bucket its index, bytes, limit, dtype and parameter names.
  std::string buckets_json() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// The synchronisation of a pipeline stage's replicas: this reducer in `sync` mode (after the
// last backward), summing rather than averaging, with these bucket caps.
// A pipeline stage's replicas' sum: sync buckets of these caps, summed, not averaged.
ReducerOptions replica_sum_options(double bucket_mb, double first_bucket_mb);
runtime::GradientSyncFactory replica_sum_factory(double bucket_mb, double first_bucket_mb);

}  // namespace baselines
