// The worker contract: what the harness tells one rank of one run (`harness-rank worker
// --config FILE` or `--config-json TEXT`). One struct, one JSON encoder and one decoder, used
// by the harness that writes it (harness/study/) and the rank programs that read it
// (rank/worker.cpp, rank/pipeline_worker.cpp), so the two cannot drift apart. Keys a
// hand-written config leaves out take the defaults below.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/models/model_catalog.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/pipeline/pipeline_schedule.h"

namespace runtime {

// kDdp: every rank the whole model; kExpertParallel: the same, but a mixture-of-experts
// model's experts sharded over the ranks (runtime/models/moe.h); kPipeline: stages; kSharded:
// every rank the whole model's computation, its parameters, gradients and optimizer state
// partitioned (ZeRO stages, baselines/sharded/).
enum class SystemKind { kDdp, kExpertParallel, kPipeline, kSharded };

// "ddp" | "expert_parallel" | "pipeline" | "sharded"; throws std::invalid_argument otherwise.
SystemKind parse_system_kind(const std::string& name);
std::string to_string(SystemKind kind);

struct WorkerModel {
  std::string name;
  long long batch_size = 0;  // per rank
  std::vector<long long> input_shape;
  long long num_classes = 0;  // 0: the model's default
  std::string loss = "mse";   // mse | cross_entropy
  long long depth = 0;        // 0: the model's default
  long long width = 0;
  std::string precision = "fp32";  // fp32 | bf16 (runtime/models/precision.h)
  MoeShape moe;                    // mixture-of-experts models
  DecoderShape decoder;            // llama: heads, kv_heads, vocab (0: its defaults)
};

// The optimizer (runtime/optim/optimizer.h): "sgd" (momentum, weight decay) or "adamw" (betas,
// eps, decoupled weight decay), PyTorch's defaults where a spec says nothing.
struct WorkerOptimizer {
  std::string name = "sgd";
  double lr = 0.001;
  double momentum = 0.0;      // sgd
  double beta1 = 0.9;         // adamw
  double beta2 = 0.999;       // adamw
  double eps = 1e-8;          // adamw
  double weight_decay = 0.0;  // both; the spec's default for adamw is 0.01, PyTorch's
};

struct WorkerSystem {
  std::string name;  // as the spec names it (tables, traces)
  SystemKind kind = SystemKind::kDdp;
  std::string mode = "overlap";  // DDP: the reducer's mode (baselines/ddp parses it)
  double bucket_mb = 25;         // DDP buckets; a pipeline's replica all-reduce buckets
  double first_bucket_mb = 1;
  // DDP buckets: none, fp16, bf16, powersgd (baselines/ddp parses it); PowerSGD's rank and
  // plain all-reduce steps before it starts.
  std::string compression = "none";
  long long powersgd_rank = 1;
  long long powersgd_warmup_steps = 2;
  // Sharded only (baselines/sharded/sharded_data_parallel.h): the ZeRO stage, the unit
  // ("layer" | "model") and whether stage 3 prefetches the next unit's all-gather.
  int shard_stage = 3;
  std::string shard_unit = "layer";
  bool shard_prefetch = true;
  // Pipelines only.
  PipelineSchedule schedule = PipelineSchedule::kDapple;
  std::string schedule_csv;  // the text of a `schedule_csv:` file (schedule kCsv)
  int micro_batches = 1;
  std::vector<StageAssignment> stages;  // in model order; a rank may serve several
};

struct WorkerConfig {
  WorkerModel model;
  WorkerOptimizer optimizer;
  long long iterations = 0;  // measured
  long long warmup = 0;
  long long seed = 0;
  int threads = 1;
  bool pin_cpus = false;  // bind the rank to cores of its own (runtime/protocol/cpu_pinning.h)
  std::string heap = "retain";  // runtime/protocol/heap_policy.h
  std::string device = "cpu";
  std::string backend = "gloo";
  double collective_timeout_s = 300;
  bool log_buckets = false;        // rank 0 writes buckets.json
  long long trace_iteration = -1;  // the iteration traced (-1: none)
  WorkerSystem system;
};

nlohmann::json to_json(const WorkerConfig& config);
// Throws std::invalid_argument naming the key that is missing or of the wrong type.
WorkerConfig worker_config_from_json(const nlohmann::json& document);

}  // namespace runtime
