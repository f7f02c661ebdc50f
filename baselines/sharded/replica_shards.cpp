#include "baselines/sharded/replica_shards.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "baselines/ddp/gradient_reducer.h"
#include "baselines/sharded/flat_storage.h"
#include "runtime/optim/optimizer.h"

namespace baselines {

struct ReplicaShards::State {
  std::vector<at::Tensor> parameters;
  runtime::Communicator* replicas = nullptr;
  ReplicaShardOptions options;
  ShardLayout layout;
  std::vector<int64_t> offsets;  // each parameter's first element in `full`
  at::Tensor full;               // every parameter, padded; the parameters are views of it
  at::Tensor chunk;  // this replica's chunk of `full` (stage 3: a copy): what the optimizer steps
  bool gathered = true;                  // stage 3: whether `full` holds the whole parameters
  std::unique_ptr<GradientReducer> sum;  // stage 1: DDP's buckets over the replicas
  std::unique_ptr<torch::optim::Optimizer> optimizer;

  int replica() const { return replicas->rank(); }
  bool frees_parameters() const { return options.stage == ZeroStage::kParameters; }
  int64_t chunk_elements() const { return layout.units.front().shard_elements; }

  // Stage 2: every parameter's gradient, end to end and padded (a missing one as zeros), the
  // reduce-scatter's input.
  at::Tensor flat_gradients() const {
    at::Tensor flat = at::zeros({layout.units.front().padded_elements}, full.options());
    for (size_t p = 0; p < parameters.size(); ++p) {
      if (!parameters[p].grad().defined()) continue;
      flat.narrow(0, offsets[p], parameters[p].numel()).copy_(parameters[p].grad().reshape({-1}));
    }
    return flat;
  }

  // Stage 1: this replica's chunk of the summed gradients, copied from the parts of the
  // parameters' gradients it overlaps (the rest of the flat buffer is never built).
  at::Tensor chunk_gradient() const {
    const int64_t begin = replica() * chunk_elements(), end = begin + chunk_elements();
    at::Tensor chunk_grad = at::zeros({chunk_elements()}, full.options());
    for (size_t p = 0; p < parameters.size(); ++p) {
      const int64_t first = std::max(begin, offsets[p]);
      const int64_t last = std::min(end, offsets[p] + parameters[p].numel());
      if (first >= last || !parameters[p].grad().defined()) continue;
      chunk_grad.narrow(0, first - begin, last - first)
          .copy_(parameters[p].grad().reshape({-1}).narrow(0, first - offsets[p], last - first));
    }
    return chunk_grad;
  }
};

namespace {

// The parameters become views of one padded buffer, so that gathering into it updates them.
void lay_out_flat(ReplicaShards::State& s) {
  torch::NoGradGuard no_grad;
  const ShardUnit& unit = s.layout.units.front();
  s.full = at::zeros({unit.padded_elements}, s.parameters.front().options());
  int64_t offset = 0;
  for (at::Tensor& parameter : s.parameters) {
    at::Tensor slot = s.full.narrow(0, offset, parameter.numel());
    slot.copy_(parameter.detach().reshape({-1}));
    parameter.set_data(slot.view(parameter.sizes()));
    s.offsets.push_back(offset);
    offset += parameter.numel();
  }
  const at::Tensor mine = s.full.narrow(0, s.replica() * unit.shard_elements, unit.shard_elements);
  s.chunk = (s.frees_parameters() ? mine.clone() : mine.detach()).requires_grad_(true);
}

// Every replica's chunk into the whole parameters.
void gather_chunks(ReplicaShards::State& s, runtime::TraceRecorder& trace) {
  torch::NoGradGuard no_grad;
  // Stages 1 and 2 step a view of `full`, which the gather overwrites: it sends a copy.
  const at::Tensor mine = s.frees_parameters() ? s.chunk.detach() : s.chunk.detach().clone();
  const double start = runtime::TraceRecorder::now_us();
  s.replicas->all_gather(s.full, mine)->wait();
  trace.add("allgather stage", runtime::TraceCategory::kAllGather, start,
            runtime::TraceRecorder::now_us(), {{"replicas", s.replicas->world_size()}});
}

}  // namespace

ReplicaShards::ReplicaShards(std::vector<at::Tensor> parameters, std::vector<std::string> names,
                             runtime::Communicator& replicas, const ReplicaShardOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  if (parameters.empty()) throw std::invalid_argument("a stage without parameters has no shards");
  s.parameters = std::move(parameters);
  s.replicas = &replicas;
  s.options = options;
  UnitParameters unit{"stage", {}};
  for (const at::Tensor& p : s.parameters) unit.numels.push_back(p.numel());
  s.layout = make_shard_layout({unit}, replicas.world_size());
  lay_out_flat(s);
  if (options.stage == ZeroStage::kOptimizerState) {
    s.sum = std::make_unique<GradientReducer>(s.parameters, std::move(names), replicas,
                                              options.reducer);
  }
  std::vector<at::Tensor> stepped = options.local_parameters;
  stepped.push_back(s.chunk);
  s.optimizer = runtime::make_optimizer(options.optimizer, stepped);
}

ReplicaShards::~ReplicaShards() = default;

void ReplicaShards::finish_backward() {
  State& s = *state_;
  if (s.sum) {
    s.sum->finish_backward();
    s.chunk.mutable_grad() = s.chunk_gradient();
    return;
  }
  const at::Tensor flat = s.flat_gradients();
  for (at::Tensor& parameter : s.parameters) parameter.mutable_grad().reset();
  at::Tensor reduced = at::empty({s.chunk_elements()}, flat.options());
  s.replicas->reduce_scatter_sum(reduced, flat);
  if (s.options.reducer.average) reduced.div_(s.replicas->world_size());
  s.chunk.mutable_grad() = reduced;
}

runtime::TraceCategory ReplicaShards::collective() const {
  return state_->sum ? runtime::TraceCategory::kAllReduce : runtime::TraceCategory::kReduceScatter;
}

void ReplicaShards::step(runtime::TraceRecorder& trace) {
  State& s = *state_;
  s.optimizer->step();
  if (!s.frees_parameters()) return gather_chunks(s, trace);
  release_storage(s.full);
  s.gathered = false;
}

void ReplicaShards::gather_parameters(runtime::TraceRecorder& trace) {
  State& s = *state_;
  if (s.gathered) return;
  allocate_storage(s.full);
  gather_chunks(s, trace);
  s.gathered = true;
}

void ReplicaShards::begin_iteration(runtime::TraceRecorder& trace) {
  State& s = *state_;
  for (at::Tensor& parameter : s.parameters) parameter.mutable_grad().reset();
  for (at::Tensor parameter : s.options.local_parameters) parameter.mutable_grad().reset();
  s.chunk.mutable_grad().reset();
  gather_parameters(trace);
}

GradientReducer* ReplicaShards::reducer() { return state_->sum.get(); }

const ShardLayout& ReplicaShards::layout() const { return state_->layout; }

torch::optim::Optimizer& ReplicaShards::optimizer() { return *state_->optimizer; }

std::vector<at::Tensor> ReplicaShards::held_parameters() const {
  const State& s = *state_;
  if (!s.frees_parameters()) return {s.full};
  return s.gathered ? std::vector<at::Tensor>{s.full, s.chunk} : std::vector<at::Tensor>{s.chunk};
}

std::vector<at::Tensor> ReplicaShards::held_gradients() const {
  const State& s = *state_;
  if (!s.sum) return {s.chunk.grad()};
  std::vector<at::Tensor> gradients;
  for (const at::Tensor& parameter : s.parameters) gradients.push_back(parameter.grad());
  return gradients;
}

runtime::GradientSyncFactory replica_shards_factory(ReplicaShardOptions options,
                                                    ReplicaShards*& made) {
  return [options, &made](std::vector<at::Tensor> parameters, std::vector<std::string> names,
                          runtime::Communicator& group) -> std::unique_ptr<runtime::GradientSync> {
    auto shards =
        std::make_unique<ReplicaShards>(std::move(parameters), std::move(names), group, options);
    made = shards.get();
    return shards;
  };
}

}  // namespace baselines
