#include "rank/worker.h"

#include <torch/torch.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "baselines/ddp/gradient_reducer.h"
#include "baselines/moe/expert_parallel_sync.h"
#include "baselines/sharded/sharded_data_parallel.h"
#include "common/atomic_file.h"
#include "common/child_process.h"
#include "common/json_file.h"
#include "rank/data_axis_steps.h"
#include "rank/data_parallel_steps.h"
#include "rank/memory_report.h"
#include "rank/pipeline_worker.h"
#include "rank/rank_device.h"
#include "rank/typical_iteration.h"
#include "runtime/comm/communicator.h"
#include "runtime/comm/counting_communicator.h"
#include "runtime/comm/result_gather.h"
#include "runtime/machine/blas_library.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/moe.h"
#include "runtime/models/precision.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/optim/optimizer.h"
#include "runtime/parallel/device_mesh.h"
#include "runtime/parallel/spmd_plan.h"
#include "runtime/parallel/spmd_transformer.h"
#include "runtime/parallel/tensor_region.h"
#include "runtime/parallel/tensor_traffic.h"
#include "runtime/parallel/vocabulary_parallel.h"
#include "runtime/protocol/cpu_pinning.h"
#include "runtime/protocol/fault_injection.h"
#include "runtime/protocol/heap_policy.h"
#include "runtime/protocol/rank_identity.h"
#include "runtime/protocol/sample_log.h"
#include "runtime/protocol/trace_recorder.h"
#include "runtime/protocol/worker_config.h"

namespace runtime {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct WorkerArgs {
  std::string config_path;
  std::string config_text;  // --config-json: the config inline (no shared file system)
  std::string out_dir;
  int rank = -1;
  int world_size = 0;
  int local_rank = 0;  // among the ranks of this host
  Rendezvous rendezvous;
  std::string gloo_host;      // the address Gloo listens on (runtime/protocol/rank_identity.h)
  bool emit_results = false;  // rank 0 prints every rank's result files as frames on stdout
  // --rank-from openmpi|slurm: started by a launcher's daemon (mpirun, orted, slurmstepd).
  bool launched_by_daemon = false;
};

// A rank started by a launcher's daemon ends with it: mpirun killed with the harness would
// otherwise leave its own ranks running, a hung one for ever. One whose daemon died while
// LibTorch was still loading (before main) has been handed to init already: false, and it goes.
bool tie_to_parent() {
  const pid_t parent = ::getppid();
  if (parent == 1) {
    std::fprintf(stderr, "harness-rank worker: the launcher that started this rank is gone\n");
    return false;
  }
  harness::die_with_parent(parent);
  return true;
}

// Identity flags may be left out: they then come from torchrun's, Slurm's or Open MPI's
// environment (runtime/protocol/rank_identity.h).
WorkerArgs parse_args(const std::vector<std::string>& args) {
  WorkerArgs parsed;
  IdentityFlags identity_flags;
  std::optional<std::string> gloo_host;
  for (size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw std::invalid_argument(args[i] + " needs a value");
      return args[++i];
    };
    const std::string& flag = args[i];
    if (flag == "--config")
      parsed.config_path = value();
    else if (flag == "--config-json")
      parsed.config_text = value();
    else if (flag == "--out")
      parsed.out_dir = value();
    else if (flag == "--rank")
      identity_flags.rank = std::stoi(value());
    else if (flag == "--world-size")
      identity_flags.world_size = std::stoi(value());
    else if (flag == "--local-rank")
      identity_flags.local_rank = std::stoi(value());
    else if (flag == "--rank-from") {
      identity_flags.source = parse_identity_source(value());
      parsed.launched_by_daemon = identity_flags.source == IdentitySource::openmpi ||
                                  identity_flags.source == IdentitySource::slurm;
    } else if (flag == "--rendezvous")
      parsed.rendezvous.kind = value();
    else if (flag == "--master-addr")
      identity_flags.master_addr = value();
    else if (flag == "--master-port")
      identity_flags.master_port = std::stoi(value());
    else if (flag == "--store-path")
      parsed.rendezvous.path = value();
    else if (flag == "--rendezvous-key")
      parsed.rendezvous.key = value();
    else if (flag == "--gloo-host")
      gloo_host = value();
    else if (flag == "--emit-results")
      parsed.emit_results = true;
    else
      throw std::invalid_argument("unknown worker option '" + flag + "'");
  }
  if ((parsed.config_path.empty() && parsed.config_text.empty()) || parsed.out_dir.empty()) {
    throw std::invalid_argument(
        "usage: harness-rank worker (--config FILE | --config-json TEXT) --out DIR [--rank R "
        "--world-size N | --rank-from auto|torchrun|slurm|openmpi] [--local-rank L] "
        "[--rendezvous tcp|file] [--master-addr A] [--master-port P] [--store-path F] "
        "[--rendezvous-key K] [--gloo-host H] [--emit-results]");
  }
  const EnvironmentLookup env = process_environment();
  const RankIdentity identity = resolve_rank_identity(identity_flags, env);
  parsed.rank = identity.rank;
  parsed.world_size = identity.world_size;
  parsed.local_rank = identity.local_rank;
  parsed.rendezvous.host = identity.master_addr;
  parsed.rendezvous.port = identity.master_port;
  parsed.rendezvous.rank0_serves = env("TORCHELASTIC_USE_AGENT_STORE").value_or("") != "True";
  if (gloo_host) {
    parsed.gloo_host = *gloo_host;
  } else if (parsed.rendezvous.kind == "tcp") {
    parsed.gloo_host = gloo_interface_host(identity, env);
  } else {
    parsed.gloo_host = env("HARNESS_GLOO_HOST").value_or("127.0.0.1");
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // The harness reads this line to name the host of a rank that fails.
  std::printf(
      "rank identity: rank=%d world=%d local_rank=%d host=%s source=%s master=%s:%d "
      "gloo=%s\n",
      identity.rank, identity.world_size, identity.local_rank, host,
      identity_source_name(identity.source).c_str(), identity.master_addr.c_str(),
      identity.master_port, parsed.gloo_host.c_str());
  std::fflush(stdout);
  return parsed;
}

// The forward pass and its loss, in the model's precision on the input's device; a
// mixture-of-experts model's load-balancing loss added, weighted as Switch Transformer's.
struct ForwardResult {
  torch::Tensor loss;
  at::ScalarType output_dtype;  // the model's output: bfloat16 where autocast ran it so
};
using ForwardPass = std::function<torch::Tensor(const torch::Tensor&)>;
using Criterion = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)>;
ForwardResult forward_loss(const ForwardPass& forward, ZooModel& model, const torch::Tensor& input,
                           const torch::Tensor& target, const Criterion& criterion,
                           Precision precision) {
  const PrecisionScope scope(precision, input.device().type());
  const torch::Tensor output = forward(input);
  torch::Tensor loss = criterion(output, target);
  if (const torch::Tensor balance = model.auxiliary_loss(); balance.defined()) {
    loss = loss + kLoadBalanceLossWeight * balance;
  }
  return {loss, output.scalar_type()};
}

// The rank's result files: samples, memory, and the traced iteration's events if any. On a GPU
// the phases are CUDA events on the rank's stream while the collectives are timed as the host
// issued them and saw them done (the device runs them later): the trace says so.
void write_rank_files(const WorkerArgs& args, const std::string& system_name, const SampleLog& log,
                      const TraceRecorder& trace, const std::optional<TracedIteration>& traced,
                      const json& memory, bool on_gpu) {
  const fs::path out = args.out_dir;
  const std::string rank = std::to_string(args.rank);
  log.write(out / ("rank" + rank + ".csv"));
  write_text_atomic(out / ("memory_rank" + rank + ".json"), harness::json_text(memory, 1) + "\n");
  if (traced && trace.size() > 0) {
    json other = {{"rank", args.rank},
                  {"world_size", args.world_size},
                  {"system", system_name},
                  {"phase_clock", on_gpu ? "cuda events" : "steady"},
                  {"collective_clock", on_gpu ? "host" : "steady"}};
    other.update(traced_iteration_json(*traced));
    write_text_atomic(out / ("trace_rank" + rank + ".json"),
                      harness::json_text(trace.to_json(other)) + "\n");
  }
}

// The rank's model: the same seed on every rank, then rank 0's weights broadcast, as DDP does at
// construction; a sharded expert (expert parallelism) is this rank's own and stays as built,
// and its mixture gets the ranks that hold the others.
std::shared_ptr<ZooModel> build_rank_model(const WorkerConfig& config, const ModelOptions& options,
                                           Communicator& communicator, c10::Device device) {
  torch::manual_seed(config.seed);
  auto model = make_model(config.model.name, options);
  model->to(device);  // built on the CPU from the seed, the same everywhere, then placed
  model->train();
  const bool sharded = options.expert_shards > 1;
  const std::vector<at::Tensor> experts = expert_parameters(*model);
  if (sharded) {
    for (auto* mixture : mixtures_of(*model)) mixture->set_expert_group(&communicator);
  }
  std::vector<std::unique_ptr<CommWork>> works;
  for (auto& p : model->parameters()) {
    // A sharded expert is this rank's own: nothing to agree on.
    if (!(sharded && is_expert_parameter(experts, p))) {
      works.push_back(communicator.broadcast(p.data(), 0));
    }
  }
  for (auto& b : model->buffers()) works.push_back(communicator.broadcast(b, 0));
  for (auto& w : works) w->wait();
  return model;
}

// The marks of a DDP iteration: start, gradients zeroed, forward done, backward issued, gradients
// synchronized, step done. On a GPU they are events, read once the iteration is over.
enum DdpMark { kStart, kZeroed, kForwardDone, kBackwardDone, kSynced, kStepped, kDdpMarks };

// Iteration `it` as its clock marked it: trace events (only the traced iteration reads the
// marks' times: on a GPU each is an event query), and its sample once warm-up is over.
void record_ddp_iteration(const PhaseClock& clock, long long it, long long warmup,
                          TraceRecorder& trace, SampleLog& log) {
  if (trace.enabled()) {
    trace.add("forward", TraceCategory::kForward, clock.at_us(kZeroed), clock.at_us(kForwardDone));
    trace.add("backward", TraceCategory::kBackward, clock.at_us(kForwardDone),
              clock.at_us(kBackwardDone));
    trace.add("step", TraceCategory::kStep, clock.at_us(kSynced), clock.at_us(kStepped));
  }
  if (it < warmup) return;
  log.add({it - warmup, clock.elapsed_ms(kZeroed, kForwardDone),
           clock.elapsed_ms(kForwardDone, kSynced),
           clock.elapsed_ms(kSynced, kStepped) + clock.elapsed_ms(kStart, kZeroed),
           clock.elapsed_ms(kStart, kStepped)});
}

// What one data-parallel iteration does, system by system: DDP's reducer, expert parallelism's,
// or sharded data parallelism's gathers and shard steps.
struct IterationSteps {
  std::function<void()> zero_grad;
  ForwardPass forward;
  std::function<void()> finish_backward;
  std::function<void()> step;
  std::function<void(long long)> before_iteration;  // optional: told each iteration's index
  // Optional: the loss of (input, target) from a system that computes it itself (a searched
  // SPMD strategy, whose ranks hold parts of the logits); `forward` is not called then.
  std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)> loss;
  // Optional: the loss of (output, target) in place of the spec's (a vocabulary-parallel head,
  // whose output is this rank's columns of the logits).
  Criterion criterion;
};

// A rank's own synthetic shard of `samples` (the rank's batch size unless given), fixed for the
// run (generation stays out of timing); `shard` draws it (the rank, or a tensor-parallel
// replica whose slices share one).
SyntheticBatch rank_batch(const WorkerConfig& config, int shard, ZooModel& model,
                          const ModelOptions& options, c10::Device device, int64_t samples = 0) {
  torch::manual_seed(config.seed * 1000003 + shard + 1);
  const SyntheticBatch data = make_synthetic_batch(
      model, options, samples > 0 ? samples : config.model.batch_size, config.model.loss);
  return {data.input.to(device), data.target.to(device)};
}

// Warm-up and measured iterations with heartbeats, each marked by the clock; the model's output
// precision comes back (bfloat16 where autocast ran it so).
at::ScalarType train_iterations(const WorkerConfig& config, const WorkerArgs& args,
                                const RankDevice& device, ZooModel& model,
                                const SyntheticBatch& data, const IterationSteps& steps,
                                TraceRecorder& trace, SampleLog& log,
                                const std::optional<Fault>& fault) {
  const long long warmup = config.warmup;
  const Precision precision = parse_precision(config.model.precision);
  const Criterion criterion = steps.criterion
                                  ? steps.criterion
                                  : [&](const torch::Tensor& output, const torch::Tensor& target) {
                                      return training_loss(config.model.loss, output, target);
                                    };
  const std::unique_ptr<PhaseClock> clock = device.phase_clock(kDdpMarks);
  at::ScalarType output_dtype = at::kFloat;
  for (long long it = 0; it < warmup + config.iterations; ++it) {
    maybe_inject_fault(fault, args.out_dir, args.rank, it);
    trace.set_enabled(config.traces(it));
    trace.set_iteration(it - warmup);
    // Heartbeat: the harness reads these lines to tell a slow rank from a hung one.
    std::printf("iteration %lld start\n", it);
    std::fflush(stdout);
    if (it == warmup) device.reset_memory_peaks();
    if (steps.before_iteration) steps.before_iteration(it);
    clock->mark(kStart);
    steps.zero_grad();
    clock->mark(kZeroed);
    const auto [loss, dtype] =
        steps.loss
            ? ForwardResult{steps.loss(data.input, data.target), at::kFloat}
            : forward_loss(steps.forward, model, data.input, data.target, criterion, precision);
    output_dtype = dtype;
    clock->mark(kForwardDone);
    loss.backward();
    clock->mark(kBackwardDone);
    steps.finish_backward();
    clock->mark(kSynced);
    steps.step();
    clock->mark(kStepped);
    clock->finish();
    record_ddp_iteration(*clock, it, warmup, trace, log);
    std::printf("iteration %lld done loss %.6f\n", it, loss.item<double>());
    std::fflush(stdout);
  }
  return output_dtype;
}

// The end of every data-parallel rank: its memory report completed with the device's peaks and
// where (and in what precision) it trained, then its result files.
void write_data_parallel_results(const WorkerArgs& args, const ParallelSystem& system,
                                 const RankDevice& device, Communicator& comm,
                                 const at::Tensor& parameter, at::ScalarType output_dtype,
                                 const WorkerConfig& config, const SampleLog& log,
                                 TraceRecorder& trace, json memory) {
  memory.update(device.memory_peaks());
  memory["placement"] = used_placement(parameter, comm);
  memory["placement"]["precision"] = observed_precision(output_dtype, device.on_gpu());
  const auto traced = keep_typical_iteration(comm, config, log, trace, device.device());
  write_rank_files(args, system.name, log, trace, traced, memory, device.on_gpu());
}

// A DDP-style rank: the same model on every rank (rank 0's weights broadcast), its own
// synthetic shard, the bucketed reducer of the configured mode, warm-up and measured
// iterations with heartbeats, then its samples and trace in the run folder.
void run_ddp_rank(const WorkerConfig& config, const WorkerArgs& args, const RankDevice& device,
                  Communicator& comm, Communicator* dense_group,
                  const std::optional<Fault>& fault) {
  const ParallelSystem& system = config.system;
  const bool expert_parallel = kind_of(system) == SystemKind::kExpertParallel;
  ModelOptions model_options = model_options_from(config.model);
  if (expert_parallel) {
    model_options.expert_shard = args.rank;
    model_options.expert_shards = args.world_size;
  }
  const auto model = build_rank_model(config, model_options, comm, device.device());
  const std::vector<at::Tensor> experts = expert_parameters(*model);
  const SyntheticBatch data = rank_batch(config, args.rank, *model, model_options, device.device());

  // DDP: one bucketed reducer over everything; expert parallelism: over the dense part (or
  // its shards), the experts scaled (rank/data_parallel_steps.h).
  DataParallelSteps sync(config, *model, comm, dense_group);
  baselines::GradientReducer* reducer = sync.reducer();
  const auto mixtures = mixtures_of(*model);

  fs::create_directories(args.out_dir);
  if (args.rank == 0 && config.log_buckets && reducer != nullptr) {
    write_text_atomic(fs::path(args.out_dir) / "buckets.json", reducer->buckets_json() + "\n");
  }

  SampleLog log;
  TraceRecorder trace;
  if (reducer != nullptr) reducer->set_trace(&trace);
  for (size_t m = 0; m < mixtures.size(); ++m) {
    mixtures[m]->set_trace(&trace, "moe " + std::to_string(m));
  }
  const IterationSteps steps{[&] { sync.begin_iteration(trace); },
                             [&](const torch::Tensor& input) { return model->forward(input); },
                             [&] { sync.sync().finish_backward(); }, [&] { sync.step(trace); },
                             [&](long long it) {
                               if (it == config.warmup) sync.start_measuring();
                             }};
  const at::ScalarType output_dtype =
      train_iterations(config, args, device, *model, data, steps, trace, log, fault);
  write_data_parallel_results(args, system, device, comm, model->parameters().front(), output_dtype,
                              config, log, trace, sync.memory());
}

// A sharded rank (ZeRO stage 1, 2 or 3; baselines/sharded/): DDP's model, data and marks, its
// collectives counted, so that its memory file carries the bytes it sent per measured
// iteration beside what the stage's formula says it holds and sends.
void run_sharded_rank(const WorkerConfig& config, const WorkerArgs& args, const RankDevice& device,
                      Communicator& comm, const std::optional<Fault>& fault) {
  const ParallelSystem& system = config.system;
  const ModelOptions model_options = model_options_from(config.model);
  const auto model = build_rank_model(config, model_options, comm, device.device());
  const SyntheticBatch data = rank_batch(config, args.rank, *model, model_options, device.device());
  fs::create_directories(args.out_dir);

  SampleLog log;
  TraceRecorder trace;
  DataAxisSteps sharded(config, model, &comm, trace);
  const IterationSteps steps{[&] { sharded.begin_iteration(trace); },
                             [&](const torch::Tensor& input) { return sharded.forward(input); },
                             [&] { sharded.finish_backward(); }, [&] { sharded.step(trace); },
                             [&](long long it) {
                               if (it == config.warmup) sharded.start_measuring();
                             }};
  const at::ScalarType output_dtype =
      train_iterations(config, args, device, *model, data, steps, trace, log, fault);
  write_data_parallel_results(args, system, device, comm, model->parameters().front(), output_dtype,
                              config, log, trace, sharded.memory());
}

// A tensor-parallel rank's groups, from its place on the mesh: the slices of its replica
// (prefix "tensor<replica>") and, with more than one replica, its slice of every replica
// ("data<slice>").
struct TensorRankGroups {
  MeshPlace place;
  std::unique_ptr<Communicator> tensor;
  std::unique_ptr<Communicator> data;
};

TensorRankGroups tensor_rank_groups(const WorkerConfig& config, const WorkerArgs& args,
                                    const RankDevice& device,
                                    const c10::intrusive_ptr<c10d::Store>& store,
                                    std::chrono::milliseconds timeout) {
  const DeviceMesh mesh = device_mesh(config.system, args.world_size, 0);
  TensorRankGroups groups{mesh.places.at(args.rank), nullptr, nullptr};
  const MeshPlace& place = groups.place;
  groups.tensor = device.communicator(
      c10::make_intrusive<c10d::PrefixStore>("tensor" + std::to_string(place.data), store),
      place.tensor, mesh.tensor, timeout, args.gloo_host);
  if (mesh.data > 1) {
    groups.data = device.communicator(
        c10::make_intrusive<c10d::PrefixStore>("data" + std::to_string(place.tensor), store),
        place.data, mesh.data, timeout, args.gloo_host);
  }
  return groups;
}

// What a tensor-parallel rank sent on its tensor group per measured iteration, beside
// Megatron's bytes for its replica's batch (runtime/parallel/tensor_traffic.h).
json tensor_report(const WorkerConfig& config, const CollectivePayload& payload,
                   int64_t replica_batch, at::ScalarType activations) {
  const TensorAxis& axis = config.system.tensor;
  TensorTrafficShape shape{replica_batch,
                           config.model.input_shape.at(0),
                           transformer_width(config.model.name, config.model.width),
                           transformer_depth(config.model.name, config.model.depth),
                           axis.degree,
                           axis.sequence_parallel,
                           static_cast<int64_t>(c10::elementSize(activations)),
                           partial_vectors_of(config.model.name)};
  shape.vocabulary_parallel = axis.vocabulary_parallel;
  shape.recompute_gather = axis.recompute_gather;
  const double iterations = static_cast<double>(std::max(1LL, config.iterations));
  return {{"degree", axis.degree},
          {"sequence_parallel", axis.sequence_parallel},
          {"vocabulary_parallel", axis.vocabulary_parallel},
          {"recompute_gather", axis.recompute_gather},
          {"bytes_sent_per_iteration", ring_bytes_sent(payload, axis.degree) / iterations},
          {"formula_bytes_per_iteration", tensor_iteration_bytes_sent(shape)}};
}

// A tensor-parallel rank (Megatron-LM's: runtime/parallel/tensor_region.h): the model drawn
// whole from the seed and its slice kept; the slices of a replica share its batch, which is
// batch_size x degree samples, so that the global batch is every other system's; slice j of
// every replica sums its gradients with DDP's reducer or shards them by ZeRO's stage
// (rank/data_axis_steps.h).
void run_tensor_parallel_rank(const WorkerConfig& config, const WorkerArgs& args,
                              const RankDevice& device, TensorRankGroups groups, Communicator& comm,
                              const std::optional<Fault>& fault) {
  const ParallelSystem& system = config.system;
  const ModelOptions model_options =
      model_options_from(config.model, system.tensor, groups.place.tensor);
  torch::manual_seed(config.seed);
  const auto model = make_model(config.model.name, model_options);
  model->to(device.device());
  model->train();
  CountingCommunicator counted(*groups.tensor);
  TensorRegion& region = *model->tensor_region();
  region.group = &counted;
  // Drawn with a forward pass (its outputs' shape), which the slices run together.
  const int64_t replica_batch = config.model.batch_size * system.tensor.degree;
  const SyntheticBatch data =
      rank_batch(config, groups.place.data, *model, model_options, device.device(), replica_batch);
  fs::create_directories(args.out_dir);
  SampleLog log;
  TraceRecorder trace;
  region.trace = &trace;
  DataAxisSteps replicas(config, model, groups.data.get(), trace);
  IterationSteps steps{[&] { replicas.begin_iteration(trace); },
                       [&](const torch::Tensor& input) { return replicas.forward(input); },
                       [&] { replicas.finish_backward(); }, [&] { replicas.step(trace); },
                       [&](long long it) {
                         if (it != config.warmup) return;
                         counted.reset();
                         replicas.start_measuring();
                       }};
  if (system.tensor.vocabulary_parallel) {
    steps.criterion = [&](const torch::Tensor& logits, const torch::Tensor& targets) {
      return vocabulary_cross_entropy(counted, logits, targets,
                                      static_cast<double>(targets.numel()), &trace, "tensor");
    };
  }
  const at::ScalarType output_dtype =
      train_iterations(config, args, device, *model, data, steps, trace, log, fault);
  json memory = replicas.memory();
  memory["tensor"] = tensor_report(config, counted.payload(), replica_batch, output_dtype);
  write_data_parallel_results(args, system, device, comm, model->parameters().front(), output_dtype,
                              config, log, trace, std::move(memory));
}

// A rank of a searched SPMD strategy (runtime/parallel/spmd_transformer.h): llama or bert drawn
// whole from the seed and this rank's parts of its weights kept, every rank the one global batch
// (batch_size x world samples, as DDP's ranks' together), the plan's collectives on the world
// communicator.
void run_spmd_rank(const WorkerConfig& config, const WorkerArgs& args, const RankDevice& device,
                   Communicator& comm, const std::optional<Fault>& fault) {
  const ModelOptions model_options = model_options_from(config.model);
  torch::manual_seed(config.seed);
  const auto model = make_model(config.model.name, model_options);
  model->to(device.device());
  SpmdTransformer spmd_model(*model,
                             read_spmd_steps({{"operators", config.system.spmd->operators}}), comm,
                             config.model.loss);
  const SyntheticBatch data = rank_batch(config, 0, *model, model_options, device.device(),
                                         config.model.batch_size * args.world_size);
  auto optimizer = make_optimizer(config.optimizer, spmd_model.parameters());
  fs::create_directories(args.out_dir);
  SampleLog log;
  TraceRecorder trace;
  spmd_model.set_trace(&trace);
  const IterationSteps steps{[&] { optimizer->zero_grad(); },
                             {},
                             [&] { spmd_model.finish_backward(); },
                             [&] { optimizer->step(); },
                             {},
                             [&](const torch::Tensor& ids, const torch::Tensor& targets) {
                               return spmd_model.forward_loss(ids, targets);
                             }};
  const at::ScalarType output_dtype =
      train_iterations(config, args, device, *model, data, steps, trace, log, fault);
  write_data_parallel_results(
      args, config.system, device, comm, spmd_model.parameters().front(), output_dtype, config, log,
      trace, memory_report(spmd_model.parameters(), spmd_model.expert_parameters(), *optimizer));
}

// Pinned before any pool or communicator starts a thread, so that every thread inherits it;
// LibTorch's intra-op pool and the BLAS's own threads both at threads_per_rank: ranks of one
// machine never oversubscribe its cores.
void prepare_process(const WorkerConfig& config, const WorkerArgs& args) {
  if (config.pin_cpus) {
    const std::vector<int> cpus =
        runtime::rank_cpus(args.local_rank, config.threads, runtime::allowed_cpus());
    runtime::pin_process(cpus);
    std::string list;
    for (int cpu : cpus) list += (list.empty() ? "" : ",") + std::to_string(cpu);
    std::printf("pinned: rank %d to cpu %s\n", args.rank, list.c_str());
    std::fflush(stdout);
  }
  torch::set_num_threads(config.threads);
  runtime::set_blas_threads(config.threads);
  apply_heap_policy(config.heap);
}

// The system's own rank, on the run's store and its world communicator.
void run_system_rank(const WorkerConfig& config, const WorkerArgs& args, const RankDevice& device,
                     const c10::intrusive_ptr<c10d::Store>& store, Communicator& communicator,
                     std::chrono::milliseconds timeout, const std::optional<Fault>& fault) {
  const SystemKind kind = kind_of(config.system);
  if (kind == SystemKind::kPipeline) {
    run_pipeline_rank(config,
                      {args.rank, args.world_size, args.out_dir, store, &communicator, timeout,
                       fault, args.gloo_host},
                      device);
  } else if (kind == SystemKind::kSharded) {
    run_sharded_rank(config, args, device, communicator, fault);
  } else if (kind == SystemKind::kSpmd) {
    run_spmd_rank(config, args, device, communicator, fault);
  } else if (kind == SystemKind::kTensorParallel) {
    run_tensor_parallel_rank(config, args, device,
                             tensor_rank_groups(config, args, device, store, timeout), communicator,
                             fault);
  } else {
    // Expert parallelism: the dense part's gradients on a process group of their own, so that
    // the reducer's collectives (PowerSGD's from a thread of its own) never interleave with
    // the all-to-alls backward issues on the main one.
    std::unique_ptr<Communicator> dense_group;
    if (kind == SystemKind::kExpertParallel) {
      dense_group = device.communicator(c10::make_intrusive<c10d::PrefixStore>("dense", store),
                                        args.rank, args.world_size, timeout, args.gloo_host);
    }
    run_ddp_rank(config, args, device, communicator, dense_group.get(), fault);
  }
}

int run_worker(const WorkerArgs& args) {
  const WorkerConfig config = worker_config_from_json(
      args.config_text.empty() ? harness::parse_json(harness::read_file(args.config_path))
                               : harness::parse_json(args.config_text));
  const auto fault = parse_fault(std::getenv("HARNESS_FAULT"));
  prepare_process(config, args);

  // The device before anything is built or joined: what this machine or LibTorch cannot give
  // stops the rank here, in one line.
  const RankDevice device(config, args.local_rank);
  Rendezvous rendezvous = args.rendezvous;
  const auto timeout =
      std::chrono::milliseconds(static_cast<long long>(config.collective_timeout_s * 1000));
  rendezvous.timeout = timeout;
  auto store = connect_store(rendezvous, args.rank, args.world_size);
  auto communicator =
      device.communicator(store, args.rank, args.world_size, timeout, args.gloo_host);
  std::printf("rendezvous done: rank %d of %d\n", args.rank, args.world_size);
  std::fflush(stdout);

  run_system_rank(config, args, device, store, *communicator, timeout, fault);
  // Every system ends the same way: result files to rank 0 (no shared file system assumed),
  // then, under a cluster launcher, onto rank 0's stdout.
  gather_result_files(*store, args.rank, args.world_size, args.out_dir);
  communicator->barrier();
  if (args.rank == 0 && args.emit_results) emit_result_frames(args.out_dir);
  return 0;
}

}  // namespace

int worker_main(const std::vector<std::string>& args) {
  try {
    const WorkerArgs parsed = parse_args(args);
    if (parsed.launched_by_daemon && !tie_to_parent()) return 1;
    return run_worker(parsed);
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "harness-rank worker: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness-rank worker: %s\n", e.what());
    return 1;
  }
}

}  // namespace runtime
