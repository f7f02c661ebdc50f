#include "rank/pipeline_worker.h"

#include "baselines/ddp/gradient_reducer.h"
#include "baselines/sharded/replica_shards.h"

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "common/json_file.h"
#include "rank/memory_report.h"
#include "rank/rank_device.h"
#include "rank/typical_iteration.h"
#include "runtime/comm/counting_communicator.h"
#include "runtime/models/model_catalog.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/moe.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/optim/optimizer.h"
#include "runtime/parallel/device_mesh.h"
#include "runtime/parallel/tensor_region.h"
#include "runtime/parallel/tensor_traffic.h"
#include "runtime/pipeline/pipeline_executor.h"
#include "runtime/protocol/sample_log.h"

namespace runtime {

namespace fs = std::filesystem;
using nlohmann::json;

ModelOptions model_options_from(const WorkerModel& model, const TensorAxis& tensor, int slice) {
  ModelOptions options;
  options.tensor_shard = slice;
  options.tensor_shards = tensor.degree;
  options.sequence_parallel = tensor.sequence_parallel;
  options.vocabulary_parallel = tensor.vocabulary_parallel;
  options.recompute_gather = tensor.recompute_gather;
  options.input_shape.assign(model.input_shape.begin(), model.input_shape.end());
  options.num_classes = model.num_classes;
  options.depth = model.depth;
  options.width = model.width;
  options.moe = model.moe;
  options.decoder = model.decoder;
  set_recomputation(options, model.activation_checkpointing, model.recompute_every);
  return options;
}

namespace {

// One measured iteration of this rank, as pipeline_rank<r>.json lists it: the phases, the
// bubble (the iteration less everything this rank was busy with), traffic and memory.
json iteration_metrics(long long iteration, double iteration_ms, double step_ms,
                       const PipelineIterationStats& stats) {
  const double busy = stats.forward_ms + stats.backward_ms + stats.allreduce_ms + step_ms;
  return {{"iteration", iteration},
          {"iteration_ms", iteration_ms},
          {"forward_ms", stats.forward_ms},
          {"backward_ms", stats.backward_ms},
          {"backward_weight_ms", stats.backward_weight_ms},
          {"allreduce_ms", stats.allreduce_ms},
          {"step_ms", step_ms},
          {"recv_wait_ms", stats.recv_wait_ms},
          {"send_ms", stats.send_ms},
          {"bubble_ms", std::max(0.0, iteration_ms - busy)},
          {"actions_start_us", stats.actions_start_us},
          {"compute_start_us", stats.compute_start_us},
          {"compute_end_us", stats.compute_end_us},
          {"bytes_sent", stats.bytes_sent},
          {"peak_in_flight", stats.peak_in_flight},
          {"peak_boundary_bytes", stats.peak_boundary_bytes},
          {"peak_allocated_bytes", stats.peak_allocated_bytes},
          {"loss", stats.loss}};
}

// Where a rank runs its pipeline. With a tensor axis of t the layout places tensor groups
// (runtime/parallel/device_mesh.h, tensor_seat): the layout's rank is the rank's tensor group,
// and each slice runs the pipeline on a process group of its own -- the ranks holding that
// slice -- while a tensor group's ranks run the same actions in the same order, so the
// collectives inside their split layers meet. Without one, the world and the rank itself.
struct PipelineGroups {
  int rank = 0;                                   // in the layout
  c10::intrusive_ptr<c10d::Store> store;          // where the stage replicas' groups meet
  std::unique_ptr<Communicator> slice;            // the slice's pipeline; null: the world
  std::unique_ptr<Communicator> tensor;           // the tensor group; null without the axis
  std::unique_ptr<CountingCommunicator> counted;  // `tensor`, counted: what the layers use
  Communicator& pipeline(const RankContext& context) { return slice ? *slice : *context.world; }
};

PipelineGroups pipeline_groups(const WorkerConfig& config, const RankContext& context,
                               const RankDevice& device) {
  const int t = config.system.tensor.degree;
  const TensorSeat seat = tensor_seat(context.rank, t);
  PipelineGroups groups{seat.group, context.store, nullptr, nullptr};
  if (t == 1) return groups;
  groups.store =
      c10::make_intrusive<c10d::PrefixStore>("slice" + std::to_string(seat.slice), context.store);
  groups.slice = device.communicator(groups.store, groups.rank, context.world_size / t,
                                     context.timeout, context.gloo_host);
  groups.tensor = device.communicator(
      c10::make_intrusive<c10d::PrefixStore>("tensor" + std::to_string(groups.rank), context.store),
      seat.slice, t, context.timeout, context.gloo_host);
  groups.counted = std::make_unique<CountingCommunicator>(*groups.tensor);
  return groups;
}

// The process group of the stage's replicas on the rank's backend, through a prefix of the
// pipeline's store (none for a stage with one replica).
std::unique_ptr<Communicator> replica_communicator(const PipelineLayout& layout,
                                                   const PipelineGroups& groups,
                                                   const RankContext& context,
                                                   const RankDevice& device, int stage_index) {
  const auto& stage_ranks = layout.stages[stage_index].ranks;
  if (stage_ranks.size() <= 1) return nullptr;
  auto prefixed =
      c10::make_intrusive<c10d::PrefixStore>("stage" + std::to_string(stage_index), groups.store);
  return device.communicator(prefixed, layout.replica_of(groups.rank),
                             static_cast<int>(stage_ranks.size()), context.timeout,
                             context.gloo_host);
}

// Every layer outside the rank's stages back on the CPU: the stages were built with the whole
// model on its device (PipelineStage's constructor says why), and the rank keeps only its own.
void return_other_layers(ZooModel& model, const PipelineLayout& layout,
                         const std::vector<int>& stages_here) {
  for (int i = 0; i < static_cast<int>(model.layers().size()); ++i) {
    const bool mine = std::any_of(stages_here.begin(), stages_here.end(), [&](int c) {
      return i >= layout.stages[c].first_layer && i <= layout.stages[c].last_layer;
    });
    if (!mine) model.layers()[i].module.ptr()->to(torch::kCPU);
  }
}

// The rank's layer ranges, one [first, last] per stage it serves.
json layer_ranges(const PipelineLayout& layout, const std::vector<int>& stages_here) {
  json ranges = json::array();
  for (int c : stages_here)
    ranges.push_back({layout.stages[c].first_layer, layout.stages[c].last_layer});
  return ranges;
}

// The runtime's options for this worker config: stages, schedule, loss, precision, device and
// the balancing loss of mixture-of-experts layers (the replicas' synchronisation is the
// StageOptimizer's).
PipelineOptions pipeline_options_of(const WorkerConfig& config, const RankDevice& device) {
  const PipelineAxis& pipeline = config.system.pipeline.value();
  PipelineOptions options;
  options.layout.stages = pipeline.stages;
  options.schedule = pipeline.schedule;
  options.schedule_csv = pipeline.schedule_csv;
  options.micro_batches = pipeline.micro_batches;
  options.loss = config.model.loss;
  options.precision = parse_precision(config.model.precision);
  options.device = device.device();
  options.auxiliary_loss_weight = kLoadBalanceLossWeight;
  return options;
}

// Every rank builds the same model and the same global batch from the seed on the CPU, then
// moves both to its device (the stage keeps its layers and rows there): no weights or data
// travel before the first iteration.
struct PipelineModel {
  std::shared_ptr<ZooModel> model;
  SyntheticBatch batch;  // on the device
};
// With a tensor axis the model is drawn whole and the rank keeps its slice of each layer; the
// batch is drawn with a forward pass, which the tensor group runs together.
PipelineModel build_pipeline_model(const WorkerConfig& config, const RankDevice& device,
                                   long long global_batch, const PipelineGroups& groups,
                                   TraceRecorder& trace) {
  torch::manual_seed(config.seed);
  const ModelOptions model_options = model_options_from(config.model, config.system.tensor,
                                                        groups.tensor ? groups.tensor->rank() : 0);
  PipelineModel built{make_model(config.model.name, model_options), {}};
  built.model->to(device.device());
  built.model->train();
  if (TensorRegion* region = built.model->tensor_region()) {
    region->group = groups.counted.get();
    region->trace = &trace;
  }
  torch::manual_seed(config.seed * 1000003 + 1);
  built.batch = make_synthetic_batch(*built.model, model_options, global_batch, config.model.loss);
  built.batch.input = built.batch.input.to(device.device());
  built.batch.target = built.batch.target.to(device.device());
  return built;
}

// How the stage's replicas step: each its whole stage (their gradients summed by DDP's
// buckets), or, on a data axis sharded at ZeRO stage 1, 2 or 3, each its chunk of it
// (baselines/sharded/replica_shards.h), counted so that memory_rank<r>.json can set the bytes
// it sent beside the formula's.
class StageOptimizer {
 public:
  explicit StageOptimizer(const WorkerConfig& config) : config_(config) {}
  StageOptimizer(const StageOptimizer&) = delete;
  StageOptimizer& operator=(const StageOptimizer&) = delete;

  bool shards() const { return config_.system.data.sharded(); }
  // Whether this replica steps a chunk (a stage of one replica, or without parameters, does not).
  bool sharding() const { return shards_ != nullptr; }
  // The pipeline's replica synchronisation; call before the stage is built.
  GradientSyncFactory replica_sync() {
    const GradientReduction& gradients = config_.system.gradients;
    if (!shards())
      return baselines::replica_sum_factory(gradients.bucket_mb, gradients.first_bucket_mb);
    baselines::ReplicaShardOptions options{
        baselines::zero_stage_from(config_.system.data.zero_stage),
        baselines::replica_sum_options(gradients.bucket_mb, gradients.first_bucket_mb),
        config_.optimizer,
        {}};
    return baselines::replica_shards_factory(options, shards_);
  }
  // The replicas' group as the stage sees it: counted where the replicas shard.
  Communicator* replicas(Communicator* group) {
    if (group == nullptr || !shards()) return group;
    counted_ = std::make_unique<CountingCommunicator>(*group);
    return counted_.get();
  }
  void bind(const PipelineStage& stage) {
    if (shards_ == nullptr) whole_ = make_optimizer(config_.optimizer, stage.stage_parameters());
  }
  // Gradients cleared; at ZeRO stage 3 the parameters the last step freed gathered again.
  void begin_iteration(TraceRecorder& trace) {
    if (shards_ == nullptr) return whole_->zero_grad();
    shards_->begin_iteration(trace);
  }
  void step(TraceRecorder& trace) {
    if (shards_ != nullptr) return shards_->step(trace);
    whole_->step();
  }
  void start_measuring() {
    if (counted_) counted_->reset();
  }
  torch::optim::Optimizer& optimizer() { return shards_ ? shards_->optimizer() : *whole_; }
  std::vector<torch::Tensor> held_parameters(const PipelineStage& stage) const {
    return shards_ ? shards_->held_parameters() : stage.stage_parameters();
  }
  std::vector<torch::Tensor> held_gradients(const PipelineStage& stage) const {
    if (shards_) return shards_->held_gradients();
    std::vector<torch::Tensor> gradients;
    for (const auto& p : stage.stage_parameters()) gradients.push_back(p.grad());
    return gradients;
  }
  // The replicas' chunk layout, what a replica sent per measured iteration and the formula's.
  json shard_report(int64_t element_bytes) const;

 private:
  const WorkerConfig& config_;
  baselines::ReplicaShards* shards_ = nullptr;  // owned by the stage
  std::unique_ptr<CountingCommunicator> counted_;
  std::unique_ptr<torch::optim::Optimizer> whole_;
};

json StageOptimizer::shard_report(int64_t element_bytes) const {
  const baselines::ShardLayout& layout = shards_->layout();
  const double iterations = static_cast<double>(std::max(1LL, config_.iterations));
  return sharded_report(layout, baselines::zero_stage_from(config_.system.data.zero_stage), "stage",
                        element_bytes, optimizer_states_per_element(config_.optimizer),
                        ring_bytes_sent(counted_->payload(), layout.world_size) / iterations,
                        /*reshard_after_forward=*/false);
}

// The rows replica `replica` of `replicas` runs per iteration: its share of every micro-batch
// (the replica mapping of runtime/pipeline/pipeline_layout.h).
int64_t replica_rows(int64_t global_batch, int micro_batches, int replica, int replicas) {
  int64_t rows = 0;
  for (int m = 0; m < micro_batches; ++m) {
    const int64_t b = micro_batch_samples(global_batch, micro_batches, m).size();
    rows += (replica + 1) * b / replicas - replica * b / replicas;
  }
  return rows;
}

// What a rank whose stages split their layers sent on its tensor group per measured iteration,
// beside Megatron's bytes (runtime/parallel/tensor_traffic.h) for its stages' transformer blocks
// at its replica's rows: with sequence parallelism the split layers' ends its stages hold, and
// the norms' gradients once per micro-batch.
json stage_tensor_report(const WorkerConfig& config, const PipelineOptions& options,
                         const PipelineStage& stage, const CollectivePayload& payload,
                         int64_t global_batch) {
  const WorkerModel& m = config.model;
  const int64_t depth = transformer_depth(m.name, m.depth);  // blocks at chain layers 1..depth
  int64_t blocks = 0;
  int ends = 0;
  for (int c : stage.stages()) {
    for (int layer = options.layout.stages[c].first_layer;
         layer <= options.layout.stages[c].last_layer; ++layer) {
      blocks += layer >= 1 && layer <= depth;
      ends += (layer == 1) + (layer == depth);
    }
  }
  const int replicas = static_cast<int>(options.layout.stages[stage.stage()].ranks.size());
  const TensorAxis& axis = config.system.tensor;
  TensorTrafficShape shape{
      replica_rows(global_batch, options.micro_batches, stage.replica(), replicas),
      m.input_shape.at(0),
      transformer_width(m.name, m.width),
      blocks,
      axis.degree,
      axis.sequence_parallel,
      m.precision == "bf16" ? 2 : 4,
      partial_vectors_of(m.name),
      ends,
      options.micro_batches};
  shape.recompute_gather = axis.recompute_gather;
  const double iterations = static_cast<double>(std::max(1LL, config.iterations));
  return {{"degree", axis.degree},
          {"sequence_parallel", axis.sequence_parallel},
          {"recompute_gather", axis.recompute_gather},
          {"bytes_sent_per_iteration", ring_bytes_sent(payload, axis.degree) / iterations},
          {"formula_bytes_per_iteration", tensor_iteration_bytes_sent(shape)}};
}

// The stage's own parameters, gradients and optimizer state, as every rank reports them in
// memory_rank<r>.json (its placement is in pipeline_rank<r>.json); with the replicas' shards,
// beside their formula, and its tensor group's bytes (`tensor`, null without the axis).
void write_stage_memory(const RankContext& context, const PipelineStage& stage,
                        StageOptimizer& optimizer, const RankDevice& device, json tensor) {
  json memory = memory_report(optimizer.held_parameters(stage), optimizer.held_gradients(stage), {},
                              optimizer.optimizer());
  memory.update(device.memory_peaks());
  if (optimizer.sharding()) {
    memory["sharded"] = optimizer.shard_report(stage.stage_parameters().front().element_size());
  }
  if (!tensor.is_null()) memory["tensor"] = std::move(tensor);
  write_text_atomic(
      fs::path(context.out_dir) / ("memory_rank" + std::to_string(context.rank) + ".json"),
      harness::json_text(memory, 1) + "\n");
}

// pipeline_rank<r>.json: where the rank sits in the pipeline, its action list, every measured
// iteration.
json rank_info(const WorkerConfig& config, const RankContext& context, const RankDevice& device,
               const PipelineOptions& options, const PipelineStage& stage, json per_iteration) {
  const PipelineLayout& layout = options.layout;
  const StageAssignment& first = layout.stages[stage.stages().front()];
  return {{"rank", context.rank},
          {"world_size", context.world_size},
          {"system", config.system.name},
          {"stage", stage.position()},
          {"stages_here", stage.stages()},
          {"replica", stage.replica()},
          {"stages", stage.schedule().ranks},
          {"model_stages", layout.stage_count()},
          {"replicas", first.ranks.size()},
          {"tensor", config.system.tensor.degree},
          {"layers", {first.first_layer, layout.stages[stage.stages().back()].last_layer}},
          {"layer_ranges", layer_ranges(layout, stage.stages())},
          {"schedule", to_string(options.schedule)},
          {"schedule_order", describe_actions(stage.schedule().actions[stage.position()])},
          {"micro_batches", options.micro_batches},
          {"global_batch", config.model.batch_size * context.world_size},
          {"placement", used_placement(stage.stage_parameters().front(), *context.world)},
          {"device_memory", device.memory_peaks()},
          {"iterations", std::move(per_iteration)}};
}

// The trace of the traced iteration nearest the run's median (trace_rank<r>.json), where the
// run traces: every rank gathers the others' iteration times to choose it.
void write_stage_trace(const WorkerConfig& config, const RankContext& context,
                       const RankDevice& device, const PipelineStage& stage,
                       const PipelineOptions& options, const SampleLog& log, TraceRecorder& trace) {
  const auto traced = keep_typical_iteration(*context.world, config, log, trace, device.device());
  if (!traced || trace.size() == 0) return;
  json other = {{"rank", context.rank},
                {"world_size", context.world_size},
                {"system", config.system.name},
                {"stage", stage.position()},
                {"stages_here", stage.stages()},
                {"schedule", to_string(options.schedule)},
                {"micro_batches", options.micro_batches},
                {"phase_clock", device.on_gpu() ? "steady, stream drained" : "steady"}};
  other.update(traced_iteration_json(*traced));
  write_text_atomic(
      fs::path(context.out_dir) / ("trace_rank" + std::to_string(context.rank) + ".json"),
      harness::json_text(trace.to_json(other)) + "\n");
}

// Warm-up and measured iterations: each one's samples into `log`, its stage metrics returned.
// `start_measuring` runs before the first measured iteration (the counters it resets count
// measured iterations only).
json train_stage(const WorkerConfig& config, const RankContext& context, const RankDevice& device,
                 PipelineStage& stage, StageOptimizer& optimizer, const SyntheticBatch& batch,
                 SampleLog& log, TraceRecorder& trace,
                 const std::function<void()>& start_measuring) {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  json per_iteration = json::array();
  for (long long it = 0; it < config.warmup + config.iterations; ++it) {
    maybe_inject_fault(context.fault, context.out_dir, context.rank, it);
    std::printf("iteration %lld start\n", it);
    std::fflush(stdout);
    trace.set_enabled(config.traces(it));
    trace.set_iteration(it - config.warmup);
    if (it == config.warmup) {
      device.reset_memory_peaks();
      start_measuring();
    }
    // On a GPU every phase ends with the stream drained (PipelineOptions::device), so the
    // steady clock times what the device did.
    const auto t0 = Clock::now();
    optimizer.begin_iteration(trace);
    device.synchronize();
    const auto t1 = Clock::now();
    PipelineIterationStats stats = stage.run_iteration(batch.input, batch.target, trace);
    // The slices of a tensor group compute the same loss: each reports its share, so that the
    // ranks' losses still sum to one process's.
    stats.loss /= config.system.tensor.degree;
    const auto t2 = Clock::now();
    const double step_start = TraceRecorder::now_us();
    optimizer.step(trace);
    device.synchronize();
    trace.add("step", TraceCategory::kStep, step_start, TraceRecorder::now_us());
    const auto t3 = Clock::now();
    if (it >= config.warmup) {
      const double iteration_ms = ms(t3 - t0);
      const double step_ms = ms(t3 - t2) + ms(t1 - t0);
      log.add({it - config.warmup, stats.forward_ms, stats.backward_ms + stats.allreduce_ms,
               step_ms, iteration_ms});
      per_iteration.push_back(iteration_metrics(it - config.warmup, iteration_ms, step_ms, stats));
    }
    std::printf("iteration %lld done loss %.6f\n", it, stats.loss);
    std::fflush(stdout);
  }
  return per_iteration;
}

}  // namespace

void run_pipeline_rank(const WorkerConfig& config, const RankContext& context,
                       const RankDevice& device) {
  StageOptimizer optimizer(config);
  PipelineOptions options = pipeline_options_of(config, device);
  options.replica_sync = optimizer.replica_sync();
  const long long global_batch = config.model.batch_size * context.world_size;
  PipelineGroups groups = pipeline_groups(config, context, device);
  TraceRecorder trace;
  const PipelineModel pipeline_model =
      build_pipeline_model(config, device, global_batch, groups, trace);
  ZooModel& model = *pipeline_model.model;

  // The stage's replicas get their own process group, through a prefix of the same store.
  const int stage_index = options.layout.stage_of(groups.rank);
  const std::unique_ptr<Communicator> replicas =
      replica_communicator(options.layout, groups, context, device, stage_index);
  PipelineStage stage(model, options, groups.pipeline(context), optimizer.replicas(replicas.get()),
                      sample_of(pipeline_model.batch));
  if (device.on_gpu()) return_other_layers(model, options.layout, stage.stages());
  optimizer.bind(stage);

  fs::create_directories(context.out_dir);
  SampleLog log;
  const auto start_measuring = [&] {
    optimizer.start_measuring();
    if (groups.counted) groups.counted->reset();
  };
  json per_iteration = train_stage(config, context, device, stage, optimizer, pipeline_model.batch,
                                   log, trace, start_measuring);
  log.write(fs::path(context.out_dir) / ("rank" + std::to_string(context.rank) + ".csv"));
  const json info = rank_info(config, context, device, options, stage, std::move(per_iteration));
  write_text_atomic(
      fs::path(context.out_dir) / ("pipeline_rank" + std::to_string(context.rank) + ".json"),
      harness::json_text(info, 1) + "\n");
  json tensor;
  if (groups.counted) {
    tensor = stage_tensor_report(config, options, stage, groups.counted->payload(), global_batch);
  }
  write_stage_memory(context, stage, optimizer, device, std::move(tensor));
  write_stage_trace(config, context, device, stage, options, log, trace);
}

}  // namespace runtime
