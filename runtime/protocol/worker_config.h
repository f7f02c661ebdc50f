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
#include "runtime/parallel/parallel_system.h"

namespace runtime {

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
  // none | full: transformer blocks recomputed in backward, the first of each
  // `recompute_every` (runtime/models/activation_checkpoint.h) | selective: their attention cores
  std::string activation_checkpointing = "none";
  long long recompute_every = 1;
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
  bool log_buckets = false;  // rank 0 writes buckets.json
  // The iterations traced, counted with the warm-up: the first (-1: none) and how many, of which
  // the rank writes the one nearest the run's median (runtime/protocol/traced_iteration.h).
  long long trace_iteration = -1;
  long long trace_iterations = 1;
  bool traces(long long iteration) const {
    return trace_iteration >= 0 && iteration >= trace_iteration &&
           iteration < trace_iteration + trace_iterations;
  }
  ParallelSystem system;  // whole, as the spec described it
};

nlohmann::json to_json(const WorkerConfig& config);
// Throws std::invalid_argument naming the key that is missing or of the wrong type.
WorkerConfig worker_config_from_json(const nlohmann::json& document);

}  // namespace runtime
