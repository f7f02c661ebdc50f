// The experiment spec: what a YAML file in experiments/ says, validated and expanded into
// the matrix of runs. The schema is documented in experiments/README.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/emulation/network_plan.h"
#include "harness/spec/mesh_form.h"
#include "harness/spec/sweep.h"
#include "harness/spec/yaml_reader.h"
#include "runtime/models/model_catalog.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/protocol/worker_config.h"

namespace harness {

inline constexpr const char* kDdpModes[] = {"overlap", "sync", "async", "per_tensor"};

struct ModelConfig {
  std::string name;
  long long batch_size = 0;  // per rank
  std::vector<long long> input_shape;
  long long num_classes = 0;  // 0: the model's default
  std::string loss = "mse";
  long long depth = 0;  // bert: encoder layers, mlp: hidden layers (0: the model's default)
  long long width = 0;  // bert: hidden size, vgg19: base channels, mlp: hidden width
  std::string precision = "fp32";  // fp32 | bf16: forward under CPU autocast, fp32 weights
  runtime::MoeShape moe;           // bert_moe: experts, top_k, capacity_factor, moe_every
  runtime::DecoderShape decoder;   // llama: heads, kv_heads, vocab (0: its defaults)
  // none | full (transformer blocks) | selective (their attention cores)
  std::string activation_checkpointing = "none";
  long long recompute_every = 1;  // with full: the first of each k blocks
};

// The rank program's flags that build `model` (`--model` and the options that differ from the
// zoo's defaults: input shape, classes, depth, width, a mixture's shape), as its `layers` and
// `profile layers` commands take them.
std::vector<std::string> rank_model_flags(const ModelConfig& model);

// `optimizer:`: sgd (momentum) or adamw (betas, eps); weight decay for both (AdamW's decoupled).
struct OptimizerConfig {
  std::string name = "sgd";
  double lr = 0.001;
  double momentum = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // 0.01 for adamw where the spec says nothing, as PyTorch's
};

// What an idle core of this machine does while the runs go (run.cpu_idle): whatever the OS
// decides (kOs), or poll, its wake-up latency held at zero (harness/machine/cpu_wake_latency.h).
enum class CpuIdle { kOs, kPoll };
// "os" | "poll", as specs spell them.
std::string to_string(CpuIdle idle);

struct RunConfig {
  long long world_size = 2;
  long long threads_per_rank = 1;
  long long iterations = 0;
  long long warmup = 0;
  long long repeats = 1;
  long long seed = 0;
  std::string device = "cpu";
  std::string backend = "gloo";
  std::string rendezvous = "tcp";   // tcp (TCPStore on loopback) | file (FileStore)
  double timeout_s = 3600;          // a whole run of one system at one point
  double stall_timeout_s = 300;     // no rank made progress for this long: hung
  bool trace = true;                // ranks write a Chrome trace of one measured iteration
  bool pin_cpus = false;            // each rank bound to threads_per_rank cores of its own
  CpuIdle cpu_idle = CpuIdle::kOs;  // this machine's idle cores while a run goes
  std::string on_failure = "stop";  // stop | continue: after a failed run, the study ...
  std::string heap = "retain";      // retain | system: runtime/protocol/heap_policy.h
  long long master_port = 0;        // rendezvous port wanted (0: any free one); busy: another
};

struct PipelineConfig {
  long long micro_batches = 4;  // per iteration; the global batch is split into this many
};

struct DdpConfig {
  double bucket_mb = 25;
  double first_bucket_mb = 1;
  std::string compression = "none";     // what buckets travel as: none, fp16, bf16, powersgd
  long long powersgd_rank = 1;          // powersgd: the factors' rank
  long long powersgd_warmup_steps = 2;  // powersgd: steps of plain all-reduce first
};

// How the harness reads an external program's per-iteration timings (experiments/README.md,
// "External systems"). Paths are templates, rendered per rank.
struct ExternalTimings {
  std::string format = "jsonl";   // jsonl | regex | chrome_trace
  std::string source = "stdout";  // jsonl and regex: stdout | file
  std::string file;               // source file (template); required for chrome_trace
  std::string pattern;            // regex: named groups over the timing fields and iter
  std::string step_name;          // chrome_trace: step events' name (a regex)
  long long skip_first = 0;       // samples dropped first (the program's own warm-up)
};

// A training program the harness does not ship, run as one more system (kind: external).
struct ExternalSystem {
  std::vector<std::string> command;  // templates; the first is the program
  std::vector<std::pair<std::string, std::string>> environment;  // value templates
  ExternalTimings timings;
  std::vector<std::string> requires_probes;  // shell commands; one failing skips the system
  // Where a probe fails: optional, the study runs without it and the table says so; else the
  // study is refused before anything runs (a comparison must not lose a side in silence).
  bool optional = false;
};

// One stage of an inline pipeline plan: layers first..last (inclusive) on `ranks` -- the
// runtime's own stage type, which validates layouts.
using PipelineStageSpec = runtime::StageAssignment;

// The one kind enumeration (runtime/parallel/parallel_system.h): a spec's `kind:` names one.
using runtime::SystemKind;

// A train spec's system: its description on the device mesh (runtime/parallel/), which every
// rank receives whole, and what only the spec knows -- an external program, where a pipeline's
// stages come from (placed per point: inline, `stages: N` or a plan) and a bucket cap that
// overrides the point's. The description's gradient buckets and compression are the point's
// `ddp:` section's, filled in per run (harness/study/planned_run.cpp).
struct SystemConfig : runtime::ParallelSystem {
  std::optional<double> bucket_mb;         // overrides ddp.bucket_mb for this system
  std::optional<ExternalSystem> external;  // kind: external
  // The pipeline axis's sources. `schedule_csv: FILE` sets schedule kCsv; its text is the axis's.
  std::string schedule_csv_path;
  std::vector<PipelineStageSpec> stages;  // inline, in model order; a rank may serve several
  int stage_count = 0;  // `stages: N`: N pipeline ranks of equal layer counts on equal rank groups
  int stages_per_rank = 1;  // with `stages: N`: the model cut into N x this many stages
  std::string plan;         // "auto" or a planner plan.json
  // Written as a device mesh (harness/spec/mesh_form.h): its degrees, the data axis's checked
  // against each point's world.
  std::optional<MeshDegrees> mesh;

  SystemKind kind() const { return external ? SystemKind::kExternal : runtime::kind_of(*this); }
  // The ranks a pipeline's layout places out of `world`: tensor groups, where a tensor axis
  // splits each stage's layers (runtime/parallel/device_mesh.h).
  long long layout_ranks(long long world) const { return world / tensor.degree; }
};

// Everything one point of the sweep needs; identical across systems and repeats.
// `cluster:`: the machines the ranks run on. More than one: machines emulated on this host
// (harness/emulation/network_plan.h), ranks filling machine 0 first, joined by the shaped
// inter-machine link (local launcher, root).
struct ClusterConfig {
  long long machines = 1;
  LinkShape inter_machine;
  // Measure the links before the study's runs (harness/study/link_probe.h): seconds a cluster,
  // which a study that needs no measured figure (no `plan: auto`) may leave out.
  bool probe_links = true;
};

struct PointConfig {
  ModelConfig model;
  OptimizerConfig optimizer;
  RunConfig run;
  DdpConfig ddp;
  PipelineConfig pipeline;
  ClusterConfig cluster;
};

struct Point {
  size_t index = 0;
  std::string id;     // "p000", stable directory name
  std::string label;  // "ddp.bucket_mb=3, model.batch_size=16" or "default"
  std::vector<std::pair<std::string, std::string>> coordinates;  // axis path -> value text
  PointConfig config;
};

struct Experiment {
  std::string spec_path;
  std::string kind = "train";
  std::string name;
  std::string description;
  std::string output = "results";
  std::vector<SystemConfig> systems;
  std::string baseline;
  std::vector<SweepAxis> sweep;
  std::vector<Point> points;
  std::vector<std::string> plots;  // figure kinds drawn after the run (harness/plot/kinds.h)
  YAML::Node resolved;             // the spec after --quick and --set, before sweep expansion
};

struct RankDevices {
  int gpus = 0;
  bool nccl = false;
};

struct LoadOptions {
  bool quick = false;
  std::vector<std::string> overrides;     // "key.path=value"
  std::vector<std::string> known_models;  // names accepted by model.name
  // The GPUs the rank program sees on this machine and whether its LibTorch has NCCL, for a
  // spec that asks for cuda or nccl; unset: not asked (a cluster launcher's ranks run on other
  // machines, where each rank checks its own placement).
  std::function<RankDevices()> rank_devices;
  // Layers of a model (throws std::invalid_argument for bad options); checks inline pipeline
  // stages against the model. Unset: stages are checked against the world size only.
  std::function<long long(const ModelConfig&)> model_layer_count;
};

// Paths that a sweep may vary.
const std::vector<std::string>& sweepable_paths();

// Parses the YAML file with locations; syntax errors become InputError with file:line:col.
YAML::Node parse_yaml_file(const std::string& path);

// Applies one "--set a.b.c=value" to the tree (the value is parsed as YAML).
void apply_override(YAML::Node& root, const std::string& assignment, SpecOrigin& origin);

// Loads, applies --quick and --set, validates and expands a train spec.
Experiment load_experiment(const std::string& path, const LoadOptions& options);

// The same from an already parsed tree (tests, and `harness run` after reading `kind`).
Experiment load_experiment(YAML::Node root, SpecOrigin origin, const LoadOptions& options);

// Number of runs: points x systems x repeats.
size_t run_count(const Experiment& experiment);

// The top-level keys of a spec of another kind (plan, profile): `kind` (must be `kind`),
// `name`, `description`, `output` and the kind's own section, after the --set overrides; errors
// are InputError with file:line:column like a train spec's.
struct SpecHeader {
  std::string name;
  std::string output;
  YAML::Node section;  // undefined when the spec has none
};
// Whether the kind has a `quick:` block (`kind: spmd_search`): none (the key is refused), kept
// (read, not applied) or applied (--quick; after the --set options that change the block and
// before the others, as a train spec's).
enum class QuickBlock { kNone, kKept, kApplied };
SpecHeader read_spec_header(YAML::Node root, SpecOrigin& origin,
                            const std::vector<std::string>& overrides, const std::string& kind,
                            const std::string& section, QuickBlock quick = QuickBlock::kNone);

// Creates <output>/<name>/<UTC timestamp>/ and writes `resolved` there as spec.yaml.
std::filesystem::path start_results_folder(const std::string& output, const std::string& name,
                                           const YAML::Node& resolved);

}  // namespace harness
