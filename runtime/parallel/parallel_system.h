// One description of a training system: how its ranks split the work, axis by axis, as
// torchtitan's ParallelDims does -- the data axis (replicas, or shards by a ZeRO stage), the
// pipeline axis (stages and their schedule), the expert axis (a mixture's experts over the data
// ranks) -- and what is not an axis (how gradients are summed: DDP's mode, buckets,
// compression). The spec reader fills it, the harness hands it to every rank whole in the
// worker config, the simulator prices it: nothing copies it field by field. Torch-free.
//
// A system's kind is not stored: it is what its axes say (kind_of), so it cannot disagree with
// them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/pipeline/pipeline_schedule.h"

namespace runtime {

// The one enumeration of systems. kDdp: every rank the whole model, gradients all-reduced;
// kSharded: the same computation, parameters, gradients and optimizer state partitioned (ZeRO
// stages, baselines/sharded/); kExpertParallel: DDP's ranks with a mixture-of-experts model's
// experts sharded over them (runtime/models/moe.h); kPipeline: stages on rank groups;
// kExternal: a program the harness does not ship (the spec's; no rank runs it);
// kTensorParallel: each layer split over a tensor axis (Megatron-LM's), replicas across it;
// kSpmd: every operator split its own way over all the ranks, as HiDup's search chose.
enum class SystemKind {
  kDdp,
  kExpertParallel,
  kExternal,
  kPipeline,
  kSharded,
  kSpmd,
  kTensorParallel
};

// "ddp" | "expert_parallel" | "external" | "pipeline" | "sharded" | "spmd" | "tensor_parallel";
// parse throws
// std::invalid_argument naming the choices otherwise.
std::string to_string(SystemKind kind);
SystemKind parse_system_kind(const std::string& name);
// Every kind's name, in the order a spec's error lists them.
std::vector<std::string> system_kind_names();

// What one unit of sharding is: a layer of the model's chain (FSDP's wrapping per block) or
// the whole model.
enum class ShardUnitKind { kLayer, kModel };
std::string to_string(ShardUnitKind unit);
// "layer" | "model"; throws std::invalid_argument otherwise.
ShardUnitKind parse_shard_unit(const std::string& name);

// The data axis: its ranks hold replicas (zero_stage 0, DDP) or shards of the optimizer state
// (1), also of the gradients (2), also of the parameters (3, FSDP).
struct DataAxis {
  int zero_stage = 0;
  ShardUnitKind unit = ShardUnitKind::kLayer;
  bool prefetch = true;  // stage 3: the next unit's all-gather queued ahead of its use
  bool sharded() const { return zero_stage > 0; }
  bool operator==(const DataAxis&) const = default;
};

// The pipeline axis: the model's stages on rank groups, run by a schedule. A spec's system
// may have the axis before its stages are placed (a plan, `stages: N`); a rank's always has them.
struct PipelineAxis {
  PipelineSchedule schedule = PipelineSchedule::kDapple;
  std::string schedule_csv;  // the text of a `schedule_csv:` file (schedule kCsv)
  int micro_batches = 1;
  std::vector<StageAssignment> stages;  // in model order; a rank may serve several
  bool operator==(const PipelineAxis&) const = default;
};

// The tensor axis: `degree` consecutive ranks split every transformer layer (attention by
// heads, the feed-forward by columns: runtime/parallel/tensor_region.h); with
// `sequence_parallel` the activations between split layers are sharded along the tokens; with
// `vocabulary_parallel` the token embedding and the head are split by vocabulary rows and the
// loss is Megatron's vocabulary-parallel cross entropy (runtime/parallel/vocabulary_parallel.h);
// with `recompute_gather` sequence parallelism keeps only the token shards of the split blocks'
// inputs and gathers them again in backward (runtime::gathered_projections). The data axis runs
// across the groups.
struct TensorAxis {
  int degree = 1;
  bool sequence_parallel = false;
  bool vocabulary_parallel = false;
  bool recompute_gather = false;
  bool split() const { return degree > 1; }
  bool operator==(const TensorAxis&) const = default;
};

// A strategy HiDup's search (planner/spmd) chose for the run: each operator's signature and the
// forms of its inputs and output over all the ranks (runtime/parallel/spmd_plan.h), priced by
// the collectives fitted in `comm` (a comm.json) and compute at a rank's `gflops`, or each
// operator's time as measured (`measured_compute`, HiDup's profiled cost model). The spec gives
// those; the harness searches for each point of a study before its ranks start and hands the
// ranks `operators` (spmd_plan.json's).
struct SpmdStrategy {
  std::string comm;
  double gflops = 0;
  nlohmann::json operators = nlohmann::json::array();
  bool measured_compute = false;
  bool operator==(const SpmdStrategy&) const = default;
};

// How replicas sum gradients (DDP, ZeRO-1's all-reduce, a pipeline stage's replicas): not an
// axis. `mode` and `compression` are parsed by baselines/ddp.
struct GradientReduction {
  std::string mode = "overlap";  // overlap | sync | async | per_tensor
  double bucket_mb = 25;
  double first_bucket_mb = 1;
  std::string compression = "none";  // none | fp16 | bf16 | powersgd
  long long powersgd_rank = 1;
  long long powersgd_warmup_steps = 2;  // plain all-reduce steps before PowerSGD starts
  bool operator==(const GradientReduction&) const = default;
};

struct ParallelSystem {
  std::string name;  // as the spec names it (tables, traces, its results folder)
  DataAxis data;
  std::optional<PipelineAxis> pipeline;
  bool experts = false;  // the expert axis: a mixture's experts sharded over the data ranks
  TensorAxis tensor;
  std::optional<SpmdStrategy> spmd;
  GradientReduction gradients;
  bool operator==(const ParallelSystem&) const = default;
};

// What the axes make it: spmd where there is a searched strategy, pipeline where there is a
// pipeline axis, then tensor_parallel, then expert_parallel, then sharded, else ddp (never
// kExternal).
SystemKind kind_of(const ParallelSystem& system);

// The worker config's "system" object: its kind (for a reader) and only the axes the system
// has. A hand-written object may give only the kind, which expands to that kind's axes
// (sharded: ZeRO-3); a kind its axes contradict is refused. from_json throws
// std::invalid_argument naming the key.
nlohmann::json to_json(const ParallelSystem& system);
ParallelSystem parallel_system_from_json(const nlohmann::json& document);

}  // namespace runtime
