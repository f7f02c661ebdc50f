#include "harness/spec/spec.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "common/yaml_file.h"
#include "harness/emulation/link_quantities.h"
#include "harness/external/external_system.h"
#include "harness/plot/kinds.h"
#include "harness/profile/spmd_costs_file.h"
#include "harness/results/results_folder.h"
#include "harness/spec/mesh_form.h"
#include "harness/spec/model_keys.h"
#include "harness/spec/pipeline_schedule_source.h"
#include "harness/spec/spec_errors.h"
#include "harness/spec/system_keys.h"
#include "harness/spec/yaml_paths.h"
#include "runtime/device/device_placement.h"
#include "runtime/models/model_catalog.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/pipeline/pipeline_schedule.h"
#include "runtime/pipeline/schedule_csv.h"

namespace harness {
namespace {

constexpr long long kMaxWorld = kMaxGpus;

std::vector<std::string> ddp_modes() { return {std::begin(kDdpModes), std::end(kDdpModes)}; }

// A bucket cap in MiB. The reducer caps buckets in whole bytes: a cap under half a byte
// (`1e-9`) would round to 0 and make every rank fail, so it is an error here.
// AdamW's betas: two numbers in [0, 1), as PyTorch requires.
void read_betas(MapReader& optimizer, OptimizerConfig& config) {
  const YAML::Node betas = optimizer.child("betas");
  if (!betas) return;
  double values[2] = {0, 0};
  bool ok = betas.IsSequence() && betas.size() == 2;
  for (size_t i = 0; ok && i < 2; ++i) {
    ok = YAML::convert<double>::decode(betas[i], values[i]) && std::isfinite(values[i]) &&
         values[i] >= 0 && values[i] < 1;
  }
  if (!ok) {
    optimizer.report(
        betas, "betas",
        "expected two numbers in [0, 1) (AdamW's beta1, beta2), got " + describe_node(betas));
    return;
  }
  config.beta1 = values[0];
  config.beta2 = values[1];
}

// `optimizer:`. Each optimizer's own keys are refused for the other: a momentum given to AdamW
// or betas to SGD would be ignored without a word.
void read_optimizer_section(MapReader& optimizer, OptimizerConfig& config) {
  config.name = optimizer.get_string("name", "sgd", {"sgd", "adamw"});
  config.lr = optimizer.get_double("lr", 0.001, 0.0);
  const bool adamw = config.name == "adamw";
  const char* own[] = {"momentum", "betas", "eps"};
  for (const char* key : own) {
    const bool belongs = adamw ? std::string(key) != "momentum" : std::string(key) == "momentum";
    if (optimizer.has(key) && !belongs) {
      optimizer.report(optimizer.child(key), key,
                       "is not an " + config.name + " setting (sgd: momentum; adamw: betas, eps)");
    }
  }
  if (adamw) {
    read_betas(optimizer, config);
    config.eps = optimizer.get_double("eps", 1e-8, 0.0);
  } else {
    config.momentum = optimizer.get_double("momentum", 0.0, MapReader::kZeroOrMore);
  }
  config.weight_decay =
      optimizer.get_double("weight_decay", adamw ? 0.01 : 0.0, MapReader::kZeroOrMore);
  optimizer.finish();
}

void read_model_section(MapReader& model, const LoadOptions& options, ModelConfig& config) {
  config.name = model.get_string("name", std::nullopt, options.known_models);
  config.batch_size = model.get_int("batch_size", std::nullopt, 1, kMaxCount);
  read_zoo_shape_keys(model, config);
  // A language model learns the next token: its logits against an MSE target of their size
  // (tokens x 32000 per sample) would be no study of anyone's.
  config.loss = model.get_string("loss", config.name == "llama" ? "cross_entropy" : "mse",
                                 {"mse", "cross_entropy"});
  config.precision = model.get_string("precision", "fp32", {"fp32", "tf32", "bf16"});
  config.activation_checkpointing =
      model.get_string("activation_checkpointing", "none", {"none", "full", "selective"});
  config.recompute_every = model.get_int("recompute_every", 1, 1, kMaxModelWidth);
  if (config.recompute_every > 1 && config.activation_checkpointing != "full") {
    model.report(model.child("recompute_every"), "recompute_every",
                 "goes with activation_checkpointing: full (it says which blocks are recomputed)");
  }
  if (config.activation_checkpointing != "none" && !runtime::has_transformer_blocks(config.name)) {
    model.report_map("activation_checkpointing: " + config.activation_checkpointing +
                     " recomputes transformer blocks (or their attention); " + config.name +
                     " has none (llama, bert, bert_moe do)");
  }
  check_zoo_shape(model, config);
  model.finish();
}

void read_run_section(MapReader& run, const LoadOptions& options, RunConfig& config) {
  config.world_size = run.get_int("world_size", 2, 1, kMaxWorld);
  config.threads_per_rank = run.get_int("threads_per_rank", 1, 1, 1024);
  config.iterations = run.get_int("iterations", std::nullopt, 1, kMaxCount);
  config.warmup = run.get_int("warmup", 0, 0, kMaxCount);
  config.repeats = run.get_int("repeats", 1, 1, kMaxRepeats);
  config.seed = run.get_int("seed", 0, 0, (1LL << 62));
  config.device = run.get_string("device", "cpu", {"cpu", "cuda"});
  config.backend = run.get_string("backend", "gloo", {"gloo", "nccl"});
  // A run that says cuda must train on cuda: what this machine's GPUs or the rank program's
  // LibTorch cannot give is refused here (the local launcher's ranks all share this machine).
  // The GPUs are asked about only when a spec wants one.
  if (config.device == "cuda") {
    runtime::PlacementRequest request;
    request.device = runtime::DeviceKind::kCuda;
    request.backend = runtime::parse_backend_kind(config.backend);
    request.ranks_on_machine = static_cast<int>(config.world_size);
    // Unknown here (a cluster launcher's ranks run elsewhere): taken on trust, each rank checks.
    request.gpus = request.ranks_on_machine;
    request.nccl_built = true;
    if (options.rank_devices) {
      const RankDevices devices = options.rank_devices();
      request.gpus = devices.gpus;
      request.nccl_built = devices.nccl;
    }
    if (const auto problem = runtime::placement_problem(request)) {
      const bool about_device = request.gpus <= 0;
      run.report(run.child(about_device ? "device" : "backend"),
                 about_device ? "device" : "backend", *problem);
    }
  }
  config.rendezvous = run.get_string("rendezvous", "tcp", {"tcp", "file"});
  config.timeout_s = run.get_double("timeout_s", 3600, 0.0);
  config.stall_timeout_s = run.get_double("stall_timeout_s", 300, 0.0);
  config.trace = run.get_bool("trace", true);
  config.pin_cpus = run.get_bool("pin_cpus", false);
  config.cpu_idle =
      run.get_string("cpu_idle", "os", {"os", "poll"}) == "poll" ? CpuIdle::kPoll : CpuIdle::kOs;
  config.on_failure = run.get_string("on_failure", "stop", {"stop", "continue"});
  config.master_port = run.get_int("master_port", 0, 0, 65535);
  config.heap = run.get_string("heap", "retain", {"retain", "system"});
  if (config.backend == "nccl" && config.device != "cuda") {
    run.report(run.child("backend"), "backend", "nccl needs run.device: cuda");
  }
  run.finish();
}

// `cluster: {machines: N, network: {inter_machine: {bandwidth: 1gbit, latency: 1ms, loss:
// 0.1%}, probe: true}}`: N machines emulated on this host. The machines must divide the ranks.
void read_cluster_section(MapReader& cluster, PointConfig& config) {
  config.cluster.machines = cluster.get_int("machines", 1, 1, kMaxCommWorld);
  if (const YAML::Node network_node = cluster.child("network")) {
    MapReader network(network_node, cluster.key_path("network"), cluster.origin());
    if (const YAML::Node link_node = network.child("inter_machine")) {
      MapReader link(link_node, network.key_path("inter_machine"), cluster.origin());
      const auto quantity = [&](const char* key, auto parse) -> std::optional<double> {
        if (!link.has(key)) return std::nullopt;
        const std::string text = link.get_string(key, std::nullopt);
        try {
          return parse(text);
        } catch (const std::invalid_argument& e) {
          link.report(link.child(key), key, e.what());
          return std::nullopt;
        }
      };
      config.cluster.inter_machine.rate_bits_per_s = quantity("bandwidth", parse_link_rate);
      config.cluster.inter_machine.delay_s = quantity("latency", parse_link_delay).value_or(0);
      config.cluster.inter_machine.loss_percent = quantity("loss", parse_link_loss).value_or(0);
      link.finish();
    }
    config.cluster.probe_links = network.get_bool("probe", true);
    network.finish();
  }
  if (cluster.ok() && config.run.world_size % config.cluster.machines != 0) {
    cluster.report(cluster.child("machines"), "machines",
                   std::to_string(config.cluster.machines) + " machines do not divide the " +
                       std::to_string(config.run.world_size) + " ranks (run.world_size)");
  }
  cluster.finish();
}

// One point's model/optimizer/run/ddp/pipeline maps. Where the origin collects errors, each
// section is read whole even when another one is wrong.
PointConfig read_point_config(const YAML::Node& root, const SpecOrigin& origin,
                              const LoadOptions& options) {
  PointConfig config;
  const auto section = [&](const char* key, bool needed,
                           const std::function<void(MapReader&)>& read) {
    const auto body = [&] {
      const YAML::Node node = root[key];
      if (!node) {
        if (needed) throw origin.error(root, "", std::string("missing required key '") + key + "'");
        return;
      }
      MapReader reader(node, key, origin);
      read(reader);
    };
    if (origin.errors() == nullptr) return body();
    origin.errors()->collect(body);
  };
  section("model", true,
          [&](MapReader& model) { read_model_section(model, options, config.model); });
  section("optimizer", false,
          [&](MapReader& optimizer) { read_optimizer_section(optimizer, config.optimizer); });
  section("run", true, [&](MapReader& run) {
    read_run_section(run, options, config.run);
    // TF32 is a GPU's tensor-core math: a CPU run in "tf32" would be fp32 under another name.
    if (config.model.precision == "tf32" && config.run.device != "cuda") {
      const std::string problem =
          "model.precision tf32 needs device cuda (the CPU has no TF32 math; use fp32 or bf16)";
      if (run.has("device")) {
        run.report(run.child("device"), "device", problem);
      } else {
        run.report_map(problem);
      }
    }
  });
  section("ddp", false, [&](MapReader& ddp) {
    config.ddp.bucket_mb = read_bucket_mb(ddp, "bucket_mb", 25);
    config.ddp.first_bucket_mb = read_bucket_mb(ddp, "first_bucket_mb", 1);
    config.ddp.compression =
        ddp.get_string("compression", "none", {"none", "fp16", "bf16", "powersgd"});
    config.ddp.powersgd_rank = ddp.get_int("powersgd_rank", 1, 1, 1 << 20);
    config.ddp.powersgd_warmup_steps = ddp.get_int("powersgd_warmup_steps", 2, 0, kMaxCount);
    ddp.finish();
  });
  section("pipeline", false, [&](MapReader& pipeline) {
    config.pipeline.micro_batches = pipeline.get_int("micro_batches", 4, 1, 1'000'000);
    pipeline.finish();
  });
  section("cluster", false, [&](MapReader& cluster) { read_cluster_section(cluster, config); });
  return config;
}

// A pipeline's schedule: a name, or `schedule_csv: FILE` in torch.distributed.pipelining's
// format, whose text is read and checked now.
void read_pipeline_schedule(MapReader& reader, SystemConfig& system, runtime::PipelineAxis& axis) {
  axis.schedule = runtime::parse_pipeline_schedule(
      reader.get_string("schedule", "dapple", runtime::pipeline_schedule_names()));
  if (!reader.has("schedule_csv")) return;
  if (reader.has("schedule")) {
    reader.fail(reader.child("schedule_csv"), "schedule_csv",
                "give a schedule's name or schedule_csv, not both");
  }
  system.schedule_csv_path = reader.get_string("schedule_csv", std::nullopt);
  const std::optional<std::string> text = read_input_file(system.schedule_csv_path);
  if (!text) {
    reader.fail(reader.child("schedule_csv"), "schedule_csv",
                "cannot open '" + system.schedule_csv_path + "'");
  }
  try {
    runtime::read_schedule_csv(*text, system.schedule_csv_path);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());  // the CSV's own file:line:column
  }
  axis.schedule = runtime::PipelineSchedule::kCsv;
  axis.schedule_csv = *text;
}

// `kind: pipeline`: a schedule and either `stages: [{layers: "0-12", ranks: [0, 1]}, ...]`,
// `stages: N` (with `stages_per_rank: v`) or `plan: auto | FILE` (a planner plan.json);
// bucket_mb caps the replicas' all-reduce buckets; `zero_stage: 1 | 2 | 3` shards each stage over
// its replicas (baselines/sharded/replica_shards.h).
// A pipeline's `tensor: t` (and `sequence_parallel`): each stage's layers split over tensor
// groups of t ranks, which `stages: N` places (3D with replicas); a plan or an inline list
// places single ranks, and is refused beside it.
void read_stage_tensor_axis(MapReader& reader, runtime::TensorAxis& tensor) {
  if (reader.has("vocabulary_parallel")) {
    reader.fail(reader.child("vocabulary_parallel"), "vocabulary_parallel",
                "is for kind: tensor_parallel (a pipeline's first and last stages hold the "
                "embedding and the head whole)");
  }
  if (!reader.has("tensor")) {
    for (const char* key : {"sequence_parallel", "recompute_gather"}) {
      if (reader.has(key)) reader.fail(reader.child(key), key, "goes with 'tensor: t'");
    }
    return;
  }
  tensor = read_tensor_axis(reader);
  read_recompute_gather(reader, tensor);
  if (!reader.has("stages") || !reader.child("stages").IsScalar()) {
    reader.fail(reader.child("tensor"), "tensor",
                "goes with 'stages: N' (the stages are placed on tensor groups; a plan or an "
                "inline list places single ranks)");
  }
}

void read_pipeline_system(MapReader& reader, SystemConfig& system, const SpecOrigin& origin) {
  read_pipeline_schedule(reader, system, system.pipeline.emplace());
  system.data.zero_stage = read_replica_zero_stage(reader);
  if (reader.has("stages_per_rank")) {
    system.stages_per_rank = static_cast<int>(reader.get_int("stages_per_rank", 1, 1, 64));
    if (!reader.has("stages") || !reader.child("stages").IsScalar()) {
      reader.fail(reader.child("stages_per_rank"), "stages_per_rank",
                  "goes with 'stages: N' (an inline list places its stages itself; a plan has "
                  "one stage per rank)");
    }
  }
  if (reader.has("bucket_mb")) system.bucket_mb = read_bucket_mb(reader, "bucket_mb", 25);
  read_stage_tensor_axis(reader, system.tensor);
  const bool has_stages = reader.has("stages"), has_plan = reader.has("plan");
  if (has_stages == has_plan) {
    reader.fail(has_plan ? reader.child("plan") : reader.child("schedule"), "stages",
                "a pipeline system needs exactly one of 'stages' (inline) or 'plan' (auto or a "
                "plan.json)");
  }
  if (has_plan) {
    system.plan = reader.get_string("plan", std::nullopt);
    // A plan file is opened now, so that --dry-run catches a wrong path before any run.
    if (system.plan != "auto" && !readable_regular_file(system.plan)) {
      reader.fail(reader.child("plan"), "plan",
                  "cannot open '" + system.plan + "' (expected auto or a planner plan.json)");
    }
    return;
  }
  YAML::Node stages = reader.child("stages");
  if (stages.IsScalar()) {
    system.stage_count = static_cast<int>(reader.get_int("stages", std::nullopt, 1, kMaxWorld));
    return;
  }
  if (!stages.IsSequence() || stages.size() == 0) {
    reader.fail(stages, "stages",
                "expected a non-empty list of {layers: \"FIRST-LAST\", ranks: [...]}");
  }
  const std::string path = reader.key_path("stages");
  for (const auto& entry : stages) {
    MapReader stage(entry, path, origin);
    const std::string layers = stage.get_string("layers", std::nullopt);
    PipelineStageSpec spec;
    try {
      const auto range = runtime::parse_layer_range(layers);
      spec.first_layer = range.first;
      spec.last_layer = range.second;
    } catch (const std::invalid_argument& e) {
      stage.fail(stage.child("layers"), "layers", e.what());
    }
    for (long long rank : stage.get_int_list("ranks", std::nullopt, 0)) {
      spec.ranks.push_back(static_cast<int>(std::min<long long>(rank, kMaxWorld)));
    }
    stage.finish();
    system.stages.push_back(spec);
  }
}

// Whether the system's schedule runs a backward split into I and W on some stage: zb_h1 and
// zbv always, a CSV where its rows say so. `table` is the schedule where it is known now.
bool splits_backward(const SystemConfig& system,
                     const std::optional<runtime::ScheduleTable>& table) {
  const auto schedule = system.pipeline->schedule;
  if (runtime::splits_every_backward(schedule)) return true;
  if (!table) return false;
  using Kind = runtime::PipelineAction::Kind;
  for (const auto& actions : table->actions) {
    for (const auto& action : actions) {
      if (action.kind == Kind::kBackwardInput || action.kind == Kind::kBackwardWeight) return true;
    }
  }
  return false;
}

// The most replicas a pipeline's stage has where the layout is known now: an inline list's
// largest stage, or `stages: N`'s equal share of the ranks; 0 for a plan's (checked by the plan).
long long replicas_per_stage(const SystemConfig& system, const PointConfig& config) {
  if (system.stage_count > 0)
    return system.layout_ranks(config.run.world_size) / system.stage_count;
  long long replicas = 0;
  for (const auto& stage : system.stages) {
    replicas = std::max(replicas, static_cast<long long>(stage.ranks.size()));
  }
  return replicas;
}

// Every micro-batch needs a sample for each replica of a stage: the global batch split into
// micro_batches parts of at least `replicas` rows (the most replicas any stage has). "" when it
// does.
std::string micro_batch_problem(const SystemConfig& system, const PointConfig& config) {
  const long long global_batch = config.model.batch_size * config.run.world_size;
  const long long replicas = std::max(1LL, replicas_per_stage(system, config));
  if (config.pipeline.micro_batches * replicas <= global_batch) return "";
  return "pipeline.micro_batches " + std::to_string(config.pipeline.micro_batches) + " x " +
         std::to_string(replicas) + " replica(s) per stage needs " +
         std::to_string(config.pipeline.micro_batches * replicas) +
         " samples, but the global batch is " + std::to_string(global_batch) +
         " (model.batch_size x run.world_size)";
}

// The schedule, where it is known now: one that does not take these counts, or cannot run (a
// deadlock, a micro-batch missing), is refused with its rank and step; and one the ranks would
// refuse after the results folder is made (I and W under a mixture's balancing loss).
void check_known_schedule(const SystemConfig& system, const PointConfig& config,
                          const std::function<void(const std::string&)>& fail) {
  std::optional<runtime::ScheduleTable> table;
  try {
    table = known_schedule(system, config);
  } catch (const std::invalid_argument& e) {
    fail(std::string("schedule: ") + e.what());
  }
  // Megatron's gathering again runs inside the backward that a zero-bubble stage splits.
  if (system.tensor.recompute_gather && splits_backward(system, table)) {
    fail("recompute_gather: " + runtime::to_string(system.pipeline->schedule) +
         " splits the backward into I and W, inside which the split blocks would gather again: "
         "use gpipe, dapple or interleaved_1f1b");
  }
  if (runtime::is_mixture_of_experts(config.model.name) && splits_backward(system, table)) {
    fail("schedule: " + runtime::to_string(system.pipeline->schedule) +
         " splits the backward into I and W, which does not carry a mixture-of-experts model's "
         "balancing loss (" +
         config.model.name + "): use gpipe, dapple or interleaved_1f1b");
  }
}

// zero_stage shards a stage over its replicas: a layout where no stage has two says nothing
// (where the layout is known now; a plan's is checked by the plan).
std::string replica_shard_problem(const SystemConfig& system, const PointConfig& config) {
  if (!system.data.sharded() || replicas_per_stage(system, config) != 1) return "";
  return "zero_stage " + std::to_string(system.data.zero_stage) +
         " shards each stage over its replicas, and every stage here has one";
}

// A pipeline system against one point: its plan source, its micro-batches against the batch, its
// stages against the ranks and the model's layers, and its schedule where it is known now.
void check_pipeline_at_point(const SystemConfig& system, const PointConfig& config,
                             const LoadOptions& options, const SpecOrigin& origin,
                             const std::string& at,
                             const std::function<void(const std::string&)>& fail) {
  // plan: auto prices the stages on emulated machines by what their links measured.
  if (system.plan == "auto" && config.cluster.machines > 1 && !config.cluster.probe_links) {
    fail(
        "plan: auto on emulated machines plans with their measured links, and "
        "cluster.network.probe is false (probe them, or give a plan.json)");
  }
  for (const std::string& problem :
       {micro_batch_problem(system, config), replica_shard_problem(system, config)}) {
    if (!problem.empty()) fail(problem);
  }
  const long long groups = system.stage_count * system.tensor.degree;
  if (system.stage_count > 0 && config.run.world_size % groups != 0) {
    fail(std::to_string(system.stage_count) + " stages" +
         (system.tensor.split() ? " of tensor groups of " + std::to_string(system.tensor.degree)
                                : "") +
         " do not divide the " + std::to_string(config.run.world_size) + " ranks evenly");
  }
  const auto layer_count = [&]() -> std::optional<int> {
    if (!options.model_layer_count) return std::nullopt;
    try {
      return static_cast<int>(options.model_layer_count(config.model));
    } catch (const std::invalid_argument& e) {
      throw InputError(origin.file() + ": model: " + e.what() + at);
    }
  };
  if (system.stage_count > 0) {
    // stages x stages_per_rank chunks of at least one layer each.
    const int chunks = system.stage_count * system.stages_per_rank;
    if (const auto layers = layer_count(); layers && chunks > *layers) {
      fail(std::to_string(chunks) + " stages (stages x stages_per_rank) but " + config.model.name +
           " has only " + std::to_string(*layers) + " layers");
    }
  } else if (!system.stages.empty()) {
    const int layers = layer_count().value_or(system.stages.back().last_layer + 1);
    try {
      runtime::validate_layout({system.stages}, layers, static_cast<int>(config.run.world_size));
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }
  check_known_schedule(system, config, fail);
}

// A tensor axis against the point: it divides the world size, and the model's heads,
// key/value heads, feed-forward width (and tokens, sequence-parallel) split over it.
void check_tensor_at_point(const SystemConfig& system, const PointConfig& config,
                           const std::function<void(const std::string&)>& fail) {
  const int t = system.tensor.degree;
  if (config.run.world_size % t != 0) {
    fail("tensor " + std::to_string(t) + " does not divide run.world_size " +
         std::to_string(config.run.world_size));
  }
  if (const std::string problem =
          tensor_replicas_problem(system.data.zero_stage, t, config.run.world_size);
      !problem.empty()) {
    fail(problem);
  }
  const ModelConfig& model = config.model;
  const std::vector<int64_t> shape(model.input_shape.begin(), model.input_shape.end());
  if (const std::string problem = runtime::tensor_split_problem(
          model.name, shape, model.width, model.decoder, t, system.tensor.sequence_parallel);
      !problem.empty()) {
    fail("model " + model.name + ": " + problem);
  }
  if (!system.tensor.vocabulary_parallel) return;
  if (const std::string problem =
          runtime::vocabulary_split_problem(model.name, model.decoder, t, model.loss);
      !problem.empty()) {
    fail("model " + model.name + ": " + problem);
  }
}

// A searched SPMD strategy runs on llama, bert, bert_moe, vit and vit_moe
// (runtime/parallel/spmd_transformer.h), in fp32, its blocks not recomputed; its operators are
// timed (`compute: measured`) on the CPU only.
template <typename Fail>
void check_spmd_at_point(const SystemConfig& system, const PointConfig& config, const Fail& fail) {
  if (system.spmd->measured_compute && config.run.device != "cpu") {
    fail("compute: measured times the operators on the CPU, not run.device " + config.run.device +
         " (price them by flops)");
  }
  const ModelConfig& model = config.model;
  if (!runtime::has_spmd_graph(model.name)) {
    fail("spmd runs llama's, bert's, bert_moe's, vit's and vit_moe's operators, not " + model.name +
         "'s");
  }
  if (model.name == "llama" && model.loss != "cross_entropy") {
    fail("spmd trains llama by cross_entropy, not model.loss " + model.loss);
  }
  if (model.precision != "fp32") fail("spmd runs in fp32, not model.precision " + model.precision);
  if (model.activation_checkpointing != "none") {
    fail("spmd recomputes nothing: model.activation_checkpointing must be none");
  }
}

// A system against one point: pinning against an external command, compression against a
// per-tensor mode, expert parallelism
// against the model and world size, inline stages against the world size (and the model's
// layers when known).
void check_system_at_point(const SystemConfig& system, const PointConfig& config,
                           const SpecOrigin& origin, const YAML::Node& systems_node,
                           const LoadOptions& options, const std::string& point_label) {
  const std::string at = point_label == "default" ? "" : " (at " + point_label + ")";
  // Errors point at the system's entry in the list.
  const auto fail = [&](const std::string& what) {
    YAML::Node where = systems_node;
    for (const auto& entry : systems_node) {
      if (entry.IsMap() && entry["name"] && entry["name"].Scalar() == system.name)
        where.reset(entry);
    }
    throw InputError(origin.where(where, "systems") + ": systems: " + system.name + ": " + what +
                     at);
  };
  if (const std::string problem = mesh_world_problem(system.mesh, config.run.world_size);
      !problem.empty()) {
    fail(problem);
  }
  if (system.kind() == SystemKind::kExternal && config.run.pin_cpus) {
    fail(
        "run.pin_cpus binds the harness's own ranks; an external system's command is not "
        "pinned (pin it in its own command, e.g. taskset)");
  }
  if ((system.kind() == SystemKind::kDdp || system.kind() == SystemKind::kExpertParallel ||
       system.kind() == SystemKind::kTensorParallel) &&
      system.gradients.mode == "per_tensor" && config.ddp.compression != "none") {
    fail("ddp.compression " + config.ddp.compression +
         " applies to buckets; per_tensor all-reduces each gradient on its own (use overlap, "
         "sync or async)");
  }
  if (system.kind() == SystemKind::kExpertParallel) {
    if (!runtime::is_mixture_of_experts(config.model.name)) {
      fail("expert_parallel needs a mixture-of-experts model (bert_moe, vit_moe), not " +
           config.model.name);
    }
    if (config.model.moe.experts % config.run.world_size != 0) {
      fail("model.experts " + std::to_string(config.model.moe.experts) +
           " do not shard evenly over " + std::to_string(config.run.world_size) +
           " ranks (run.world_size)");
    }
    return;
  }
  if (system.kind() == SystemKind::kSpmd) check_spmd_at_point(system, config, fail);
  if (system.kind() == SystemKind::kPipeline)
    check_pipeline_at_point(system, config, options, origin, at, fail);
  if (system.pipeline && config.model.activation_checkpointing != "none" &&
      (runtime::splits_every_backward(system.pipeline->schedule) ||
       system.pipeline->schedule == runtime::PipelineSchedule::kCsv)) {
    fail("model.activation_checkpointing recomputes a block inside its backward, which " +
         runtime::to_string(system.pipeline->schedule) +
         " may split into input and weight passes (not built: use gpipe, dapple or "
         "interleaved_1f1b)");
  }
  if (system.tensor.split()) check_tensor_at_point(system, config, fail);
}

// `kind: tensor_parallel`: `tensor: t` consecutive ranks split each layer (its degree),
// `sequence_parallel`, `vocabulary_parallel`, and how the replicas across the groups sum
// gradients (DDP's `mode`, `bucket_mb`).
void read_tensor_system(MapReader& reader, SystemConfig& system) {
  system.tensor = read_tensor_system_axis(reader);
  // The replicas across the groups: DDP's sum, or sharded by a ZeRO stage (3: FSDP x TP).
  system.data.zero_stage = static_cast<int>(reader.get_int("zero_stage", 0, 0, 3));
  system.gradients.mode = reader.get_string("mode", "overlap", ddp_modes());
  if (reader.has("bucket_mb")) system.bucket_mb = read_bucket_mb(reader, "bucket_mb", 25);
}

// `kind: spmd`: HiDup's search at each point over all its ranks, priced by `comm` (a comm.json
// of `harness profile comm`, read now so that --dry-run catches it) and `compute`: `flops` at
// `gflops` (a rank's GFLOP/s), or each operator's time `measured` before the search.
void read_spmd_system(MapReader& reader, SystemConfig& system) {
  runtime::SpmdStrategy strategy;
  strategy.comm = reader.get_string("comm", std::nullopt);
  strategy.measured_compute =
      reader.get_string("compute", "flops", {"flops", "measured"}) == "measured";
  if (!strategy.measured_compute) {
    strategy.gflops = reader.get_double("gflops", std::nullopt, 0.0);
  } else if (reader.has("gflops")) {
    reader.report(reader.child("gflops"), "gflops",
                  "compute: measured prices compute by the operators' times, so gflops would go "
                  "unused (drop it, or compute: flops)");
  }
  if (reader.ok()) {
    try {
      read_spmd_costs(strategy.comm, strategy.gflops * 1e9);
    } catch (const InputError& e) {
      reader.report(reader.child("comm"), "comm", e.what());
    }
  }
  system.spmd = strategy;
}

// One entry of `systems:`: a ddp mode's name, or a map of a system of any kind. Nothing when
// its errors were recorded (SpecOrigin::report_to) rather than thrown.
std::optional<SystemConfig> read_system(const YAML::Node& entry, const SpecOrigin& origin) {
  SystemConfig system;
  if (entry.IsScalar()) {
    // Shorthand: "overlap" is the ddp system of that mode, named after it.
    system.name = system.gradients.mode = entry.Scalar();
    const auto modes = ddp_modes();
    if (std::find(modes.begin(), modes.end(), system.name) == modes.end()) {
      std::string message = "systems: unknown system '" + system.name +
                            "' (expected one of: " + join(modes, ", ") + ")";
      if (auto hint = closest_match(system.name, modes); !hint.empty()) {
        message += "; did you mean '" + hint + "'?";
      }
      throw origin.error(entry, "systems", message);
    }
    return system;
  }
  // The composed form (`mesh:`) is read as the short form it expands to.
  const std::optional<MeshForm> form = expand_mesh_form(entry, "systems", origin);
  if (!form) return std::nullopt;
  system.mesh = form->mesh;
  MapReader reader(form->entry, "systems", origin);
  reader.locate_at(entry);
  system.name = reader.get_string("name", std::nullopt);
  if (const std::string problem = folder_name_problem(system.name);
      reader.has("name") && !problem.empty()) {
    reader.report(reader.child("name"), "systems.name",
                  "cannot name a system's folder: " + problem + " " + std::string(kFolderNameRule));
  }
  const SystemKind kind =
      runtime::parse_system_kind(reader.get_string("kind", "ddp", runtime::system_kind_names()));
  // The kind decides which keys belong: none of the rest is judged against a stand-in kind.
  if (!reader.ok()) return std::nullopt;
  if (kind == SystemKind::kExternal) {
    system.external = read_external_system(reader, entry, origin);
  } else if (kind == SystemKind::kPipeline) {
    read_pipeline_system(reader, system, origin);
  } else if (kind == SystemKind::kSharded) {
    system.data = read_sharded_data_axis(reader);  // stage 1 all-reduces in overlapped buckets
    if (reader.has("bucket_mb")) system.bucket_mb = read_bucket_mb(reader, "bucket_mb", 25);
  } else if (kind == SystemKind::kTensorParallel) {
    read_tensor_system(reader, system);
  } else if (kind == SystemKind::kSpmd) {
    read_spmd_system(reader, system);
  } else {
    system.experts = kind == SystemKind::kExpertParallel;
    system.gradients.mode = reader.get_string(
        "mode", system.experts ? std::optional<std::string>("overlap") : std::nullopt, ddp_modes());
    if (reader.has("bucket_mb")) system.bucket_mb = read_bucket_mb(reader, "bucket_mb", 25);
    // expert_parallel's dense part may be sharded (rank/data_parallel_steps.h).
    if (system.experts) {
      system.data.zero_stage = read_replica_zero_stage(reader);
    }
  }
  reader.finish();
  if (!reader.ok()) return std::nullopt;
  return system;
}

// Every system is read (and its errors recorded, where the origin collects them); the list
// holds the ones read cleanly.
std::vector<SystemConfig> read_systems(const YAML::Node& node, const SpecOrigin& origin) {
  if (!node) throw InputError(origin.file() + ": missing required key 'systems'");
  if (!node.IsSequence() || node.size() == 0) {
    throw origin.error(node, "systems",
                       "systems: expected a non-empty list of systems, got " + describe_node(node));
  }
  if (node.size() > kMaxSystems) {
    throw origin.error(node, "systems",
                       "systems: more than " + std::to_string(kMaxSystems) + " systems");
  }
  std::vector<SystemConfig> systems;
  std::set<std::string> names;
  for (const auto& entry : node) {
    const auto read = [&] {
      const auto system = read_system(entry, origin);
      if (!system) return;
      if (!names.insert(system->name).second) {
        throw origin.error(entry, "systems",
                           "systems: duplicate system name '" + system->name + "'");
      }
      systems.push_back(*system);
    };
    if (origin.errors() == nullptr) {
      read();
    } else {
      origin.errors()->collect(read);
    }
  }
  return systems;
}

// `name:`, which names a folder under `output`: the same rule for every spec kind, so that no
// name writes outside it.
std::string read_experiment_name(MapReader& top) {
  const std::string name = top.get_string("name", std::nullopt);
  if (const std::string problem = folder_name_problem(name); !problem.empty()) {
    top.report(top.child("name"), "name",
               "cannot name a results folder: " + problem + " " + std::string(kFolderNameRule));
  }
  return name;
}

// One override of the quick: block; a map goes in key by key, so that `run: {iterations: 3}`
// changes the iterations and keeps the rest of `run:` (it replaced the whole map, and a run of
// 4 ranks went to the default 2 under --quick without a word).
void apply_quick_value(YAML::Node& root, SpecOrigin& origin, const std::string& path,
                       const YAML::Node& value) {
  const YAML::Node current = get_path(root, path_keys(path));
  if (value.IsMap() && current && current.IsMap()) {
    for (const auto& entry : value) {
      apply_quick_value(root, origin, path + "." + entry.first.Scalar(), entry.second);
    }
    return;
  }
  const std::string quick_path = "quick." + path;
  origin.mark_overridden(path, origin.where(value, quick_path), origin.position(value, quick_path));
  set_path(root, path_keys(path), value);
}

// The spec's own `quick:` block (`dotted.path: value` entries, or maps of them) written into
// `root`. Errors in those values are reported where quick: says them, or at the --set that
// changed them.
void apply_quick_block(YAML::Node& root, SpecOrigin& origin, const YAML::Node& quick) {
  MapReader reader(quick, "quick", origin);  // checks it is a map
  for (const auto& entry : quick)
    apply_quick_value(root, origin, entry.first.Scalar(), entry.second);
}

// --quick: few iterations, first and last value of every sweep axis, then the spec's own
// `quick:` overrides.
void apply_quick(YAML::Node& root, SpecOrigin& origin) {
  auto clamp = [&](const std::string& path, long long limit) {
    const auto keys = path_keys(path);
    YAML::Node current = get_path(root, keys);
    long long value = 0;
    if (current && YAML::convert<long long>::decode(current, value) && value <= limit) return;
    set_path(root, keys, YAML::Node(limit));
    origin.mark_overridden(path, "--quick (" + path + "=" + std::to_string(limit) + ")");
  };
  clamp("run.iterations", 5);
  clamp("run.warmup", 2);
  clamp("run.repeats", 1);
  if (YAML::Node sweep = root["sweep"]; sweep && sweep.IsMap()) {
    for (auto entry : sweep) {
      YAML::Node values = entry.second;
      if (!values.IsSequence() || values.size() <= 2) continue;
      YAML::Node shortened(YAML::NodeType::Sequence);
      shortened.push_back(values[0]);
      shortened.push_back(values[values.size() - 1]);
      sweep[entry.first.Scalar()] = shortened;
    }
  }
  if (const YAML::Node quick = root["quick"]) apply_quick_block(root, origin, quick);
}

// The --set options, those that change the quick: block first: `quick` (which applies it, or
// not) runs between them and the others, so that every other --set wins over --quick.
void apply_overrides_around_quick(YAML::Node& root, SpecOrigin& origin,
                                  const std::vector<std::string>& overrides,
                                  const std::function<void()>& quick) {
  const auto sets_quick = [](const std::string& assignment) {
    return assignment.rfind("quick.", 0) == 0 || assignment.rfind("quick=", 0) == 0;
  };
  for (const auto& assignment : overrides) {
    if (sets_quick(assignment)) apply_override(root, assignment, origin);
  }
  quick();
  for (const auto& assignment : overrides) {
    if (!sets_quick(assignment)) apply_override(root, assignment, origin);
  }
}

}  // namespace

std::vector<std::string> rank_model_flags(const ModelConfig& model) {
  std::vector<std::string> flags = {"--model", model.name};
  std::string shape;
  for (long long d : model.input_shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
  if (!shape.empty()) flags.insert(flags.end(), {"--input-shape", shape});
  if (model.num_classes > 0) {
    flags.insert(flags.end(), {"--num-classes", std::to_string(model.num_classes)});
  }
  if (model.depth > 0) flags.insert(flags.end(), {"--depth", std::to_string(model.depth)});
  if (model.width > 0) flags.insert(flags.end(), {"--width", std::to_string(model.width)});
  if (runtime::is_mixture_of_experts(model.name)) {
    flags.insert(flags.end(), {"--moe", runtime::moe_flag_text(model.moe)});
  }
  if (!(model.decoder == runtime::DecoderShape{})) {
    flags.insert(flags.end(), {"--decoder", runtime::decoder_flag_text(model.decoder)});
  }
  return flags;
}

std::string to_string(CpuIdle idle) { return idle == CpuIdle::kPoll ? "poll" : "os"; }

const std::vector<std::string>& sweepable_paths() {
  static const std::vector<std::string> paths = {
      "model",    // a whole model map: models whose other keys differ (bert vs vgg19)
      "cluster",  // a whole cluster map: one machine beside emulated ones
      "model.name",
      "model.batch_size",
      "model.input_shape",
      "model.num_classes",
      "model.depth",
      "model.width",
      "model.precision",
      "model.activation_checkpointing",
      "model.recompute_every",
      "model.experts",
      "model.top_k",
      "model.capacity_factor",
      "model.moe_every",
      "optimizer.lr",
      "run.world_size",
      "run.threads_per_rank",
      "run.iterations",
      "run.warmup",
      "run.seed",
      "run.heap",
      "run.cpu_idle",
      "ddp.bucket_mb",
      "ddp.first_bucket_mb",
      "ddp.compression",
      "ddp.powersgd_rank",
      "ddp.powersgd_warmup_steps",
      "pipeline.micro_batches",
      "cluster.machines",
      "cluster.network.inter_machine.bandwidth",
      "cluster.network.inter_machine.latency",
      "cluster.network.inter_machine.loss"};
  return paths;
}

namespace {

// `plots:`: `harness plot` kinds (or "all"), drawn into the results folder after the tables.
std::vector<std::string> read_plot_kinds(MapReader& top) {
  std::vector<std::string> chosen;
  const YAML::Node plots = top.child("plots");
  if (!plots) return chosen;
  std::vector<std::string> kinds(std::begin(kPlotKinds), std::end(kPlotKinds));
  const std::string expected = "expected a list of " + join(kinds, ", ") + " or all";
  if (!plots.IsSequence()) top.fail(plots, "plots", expected);
  kinds.push_back("all");
  for (const auto& item : plots) {
    const std::string kind = item.IsScalar() ? item.Scalar() : "";
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      top.fail(item, "plots", "unknown figure kind " + describe_node(item) + " (" + expected + ")");
    }
    chosen.push_back(kind);
  }
  return chosen;
}

// The spec's own keys (name, systems, baseline, sweep, plots); the point sections are read
// by read_point_config.
void read_top_level(const YAML::Node& root, const SpecOrigin& origin, Experiment& experiment) {
  SpecErrors& errors = *origin.errors();
  MapReader top(root, "", origin);
  // `kind: plan` and `kind: profile` specs are dispatched before this point.
  experiment.kind = top.get_string("kind", "train", {"train", "plan", "profile"});
  experiment.name = read_experiment_name(top);
  experiment.description = top.get_string("description", "");
  experiment.output = top.get_string("output", "results");
  const size_t errors_before_systems = errors.count();
  errors.collect([&] { experiment.systems = read_systems(top.child("systems"), origin); });
  if (errors.count() == errors_before_systems) {
    std::vector<std::string> names;
    for (const auto& system : experiment.systems) names.push_back(system.name);
    experiment.baseline = top.get_string("baseline", names.front(), names);
  } else {
    top.child("baseline");  // names a system: checked once the systems read cleanly
  }
  errors.collect([&] {
    experiment.sweep = read_sweep_axes(top.child("sweep"), origin, "sweep", sweepable_paths());
  });
  errors.collect([&] { experiment.plots = read_plot_kinds(top); });
  top.child("quick");  // applied before reading
  for (const char* section : {"model", "optimizer", "run", "ddp", "pipeline", "cluster"}) {
    top.child(section);
  }
  top.finish();
}

}  // namespace

YAML::Node parse_yaml_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) {
    throw InputError(path + ": is a folder, not a spec file (experiments/*.yaml)");
  }
  YAML::Node root = read_yaml_file(path);
  if (!root || root.IsNull()) throw InputError(path + ": the file is empty");
  return root;
}

void apply_override(YAML::Node& root, const std::string& assignment, SpecOrigin& origin) {
  const std::string option = "--set " + assignment;
  const size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw InputError(option + ": expected key.path=value");
  }
  const std::string path = assignment.substr(0, equals);
  const auto keys = path_keys(path);
  if (static_cast<int>(keys.size()) > kMaxYamlDepth) {
    throw InputError(option + ": a key path of more than " + std::to_string(kMaxYamlDepth) +
                     " keys");
  }
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(equals + 1));
  } catch (const YAML::ParserException& e) {
    throw InputError(option + ": the value is not valid YAML: " + e.msg);
  }
  check_yaml_document(value, option);
  for (const auto& key : keys) {
    if (key.empty()) throw InputError(option + ": empty key in '" + path + "'");
  }
  set_path(root, keys, value);
  origin.mark_overridden(path, option);
  // A swept value set on the command line is reported as the command line's too.
  if (keys.size() == 2 && keys[0] == "sweep") origin.mark_overridden(keys[1], option);
}

Experiment load_experiment(const std::string& path, const LoadOptions& options) {
  return load_experiment(parse_yaml_file(path), SpecOrigin(path), options);
}

Experiment load_experiment(YAML::Node root, SpecOrigin origin, const LoadOptions& options) {
  if (!root.IsMap()) {
    throw InputError(origin.where(root, "") + ": the spec must be a map of keys, got " +
                     describe_node(root));
  }
  apply_overrides_around_quick(root, origin, options.overrides, [&] {
    if (options.quick) apply_quick(root, origin);
  });

  Experiment experiment;
  experiment.spec_path = origin.file();
  {
    YAML::Emitter out;
    out << root;
    experiment.resolved = YAML::Load(out.c_str());
  }

  // Every error of the spec as written is reported at once; then, when it has none, every
  // error of the points of the sweep with their values in place.
  SpecErrors errors(origin.file());
  origin.report_to(&errors);
  read_top_level(root, origin, experiment);
  const size_t errors_before_point = errors.count();
  const PointConfig base = read_point_config(root, origin, options);
  const bool base_read_cleanly = errors.count() == errors_before_point;
  if (errors.empty() && !options.quick && root["quick"]) {
    // The quick: block is checked on every run, not first under --quick. Its values go into
    // a copy of the spec; the rest of that copy was read cleanly just above.
    YAML::Node quick_root = YAML::Clone(root);
    SpecOrigin quick_origin = origin;
    errors.collect([&] { apply_quick_block(quick_root, quick_origin, root["quick"]); });
    read_point_config(quick_root, quick_origin, options);
  }
  // A spec refused for its other keys has its systems checked against its own point too (one
  // with no sweep, read cleanly): one run names every error, not the top-level ones first.
  if (!errors.empty() && base_read_cleanly && experiment.sweep.empty()) {
    for (const auto& system : experiment.systems) {
      errors.collect([&] {
        check_system_at_point(system, base, origin, root["systems"], options, "default");
      });
    }
  }
  errors.throw_if_any();

  // Every point with its values in place; an error that repeats at several points (a bad
  // swept value) is reported once, and the layout checks run only on a point read cleanly.
  expand_sweep(experiment.sweep, root, [&](const SweepPoint& at) {
    Point point;
    point.index = at.index;
    point.id = at.id;
    point.label = at.label;
    point.coordinates = at.coordinates;
    const size_t errors_before = errors.count();
    point.config = experiment.sweep.empty() ? base : read_point_config(root, origin, options);
    if (errors.count() == errors_before) {
      for (const auto& system : experiment.systems) {
        errors.collect([&] {
          check_system_at_point(system, point.config, origin, root["systems"], options,
                                point.label);
        });
      }
    }
    experiment.points.push_back(std::move(point));
  });
  errors.throw_if_any();
  origin.report_to(nullptr);
  // The same bound a manifest read back has (harness/results/run_manifest.cpp).
  long long runs = 0, rank_runs = 0;
  for (const auto& point : experiment.points) {
    const long long point_runs =
        point.config.run.repeats * static_cast<long long>(experiment.systems.size());
    runs += point_runs;
    rank_runs += point_runs * point.config.run.world_size;
  }
  if (runs > kMaxRuns || rank_runs > kMaxRankRuns) {
    throw InputError(origin.file() + ": the study has " + std::to_string(runs) + " runs and " +
                     std::to_string(rank_runs) +
                     " rank runs (points x systems x repeats, x world "
                     "size); at most " +
                     std::to_string(kMaxRuns) + " and " + std::to_string(kMaxRankRuns));
  }
  return experiment;
}

size_t run_count(const Experiment& experiment) {
  size_t runs = 0;
  for (const auto& point : experiment.points) {
    runs += experiment.systems.size() * static_cast<size_t>(point.config.run.repeats);
  }
  return runs;
}

SpecHeader read_spec_header(YAML::Node root, SpecOrigin& origin,
                            const std::vector<std::string>& overrides, const std::string& kind,
                            const std::string& section, QuickBlock quick) {
  if (quick == QuickBlock::kNone) {
    for (const auto& assignment : overrides) apply_override(root, assignment, origin);
  } else {
    apply_overrides_around_quick(root, origin, overrides, [&] {
      const YAML::Node block = root["quick"];
      if (quick == QuickBlock::kApplied && block) apply_quick_block(root, origin, block);
    });
  }
  MapReader top(root, "", origin);
  if (quick != QuickBlock::kNone) top.child("quick");
  top.get_string("kind", std::nullopt, {kind});
  SpecHeader header;
  header.name = read_experiment_name(top);
  top.get_string("description", "");
  header.output = top.get_string("output", "results");
  // Assigning a missing key's node would throw yaml-cpp's "invalid node": keep it undefined.
  if (const YAML::Node found = top.child(section); found.IsDefined()) {
    header.section.reset(found);
  } else {
    header.section = YAML::Node(YAML::NodeType::Undefined);
  }
  top.finish();
  return header;
}

std::filesystem::path start_results_folder(const std::string& output, const std::string& name,
                                           const YAML::Node& resolved) {
  const auto directory = create_run_directory(output, name);
  YAML::Emitter spec;
  spec << resolved;
  write_file_atomic(directory / "spec.yaml", std::string(spec.c_str()) + "\n");
  return directory;
}

}  // namespace harness
