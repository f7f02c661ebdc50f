#include "baselines/sharded/sharded_data_parallel.h"

#include <c10/core/DeviceGuard.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "baselines/sharded/collective_queue.h"
#include "baselines/sharded/flat_storage.h"
#include "runtime/optim/optimizer.h"

namespace baselines {

struct ShardedDataParallel::State {
  struct UnitState {
    size_t first_layer = 0, last_layer = 0;  // the layers of the chain it covers
    std::vector<size_t> members;             // indices into the model's parameters
    std::vector<int64_t> offsets;            // each member's first element in `full`
    at::Tensor full;        // the whole unit, padded; stage 3: storage released between uses
    at::Tensor shard;       // what the optimizer steps; stages 1, 2: a view of full's chunk r
    at::Tensor shard_grad;  // the rank average of the shard's gradient, once reduced
    bool gathered = true;
    std::shared_future<void> gathering;   // valid while an all-gather is queued
    std::shared_future<void> scattering;  // valid while a reduce-scatter is queued
    size_t pending = 0;                   // members whose gradient has not arrived
  };

  struct TimedCollective {
    std::string name;
    runtime::TraceCategory category;
    double start_us = 0, end_us = 0;
  };

  std::shared_ptr<runtime::ZooModel> model;
  runtime::Communicator* group = nullptr;
  ShardedOptions options;
  ShardLayout layout;
  std::vector<at::Tensor> parameters;  // registration order
  std::vector<std::string> names;
  std::vector<UnitState> units;
  std::vector<int> unit_of_layer;         // -1: a layer without parameters
  std::vector<size_t> unit_of_parameter;  // by parameter index
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<GradientReducer> reducer;                          // stage 1
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;  // keep hooks alive
  runtime::TraceRecorder* trace = nullptr;
  std::mutex timings_mutex;
  std::vector<TimedCollective> timings;  // the collective thread's, until flushed to the trace
  CollectiveQueue queue;                 // last: its thread stops before the rest goes

  int rank() const { return group->rank(); }
  int world() const { return group->world_size(); }
  bool shards_parameters() const { return options.stage == ZeroStage::kParameters; }

  void find_units();
  void build_buffers();
  void register_gradient_hooks(const std::weak_ptr<State>& weak);

  // Runs on the collective thread, timed for the trace.
  void timed(const std::string& name, runtime::TraceCategory category,
             const std::function<void()>& collective) {
    const double start = runtime::TraceRecorder::now_us();
    collective();
    const double end = runtime::TraceRecorder::now_us();
    std::lock_guard<std::mutex> lock(timings_mutex);
    timings.push_back({name, category, start, end});
  }
  void flush_timings() {
    std::lock_guard<std::mutex> lock(timings_mutex);
    if (trace != nullptr) {
      for (const auto& t : timings) trace->add(t.name, t.category, t.start_us, t.end_us);
    }
    timings.clear();
  }

  void queue_gather(size_t u);
  void gather_now(size_t u);
  void release(size_t u);
  void on_gradient_ready(size_t parameter);
  void reduce_scatter(size_t u);
  void shard_gradients_from_full(size_t u);
};

// Units in chain order: each layer with parameters (or the whole chain as one), their members
// in the model's registration order.
void ShardedDataParallel::State::find_units() {
  std::unordered_map<const void*, size_t> index;
  for (size_t p = 0; p < parameters.size(); ++p) {
    index[parameters[p].unsafeGetTensorImpl()] = p;
  }
  const auto& layers = model->layers();
  unit_of_layer.assign(layers.size(), -1);
  unit_of_parameter.assign(parameters.size(), SIZE_MAX);
  for (size_t l = 0; l < layers.size(); ++l) {
    const auto members = layers[l].module.ptr()->parameters();
    if (members.empty()) continue;
    if (options.unit == ShardUnitKind::kLayer || units.empty()) units.emplace_back();
    UnitState& unit = units.back();
    if (unit.members.empty()) unit.first_layer = l;
    unit.last_layer = l;
    for (const auto& p : members) {
      const size_t i = index.at(p.unsafeGetTensorImpl());
      unit.members.push_back(i);
      unit_of_parameter[i] = units.size() - 1;
    }
    unit_of_layer[l] = static_cast<int>(units.size() - 1);
  }
  if (options.unit == ShardUnitKind::kModel && !units.empty()) {
    units[0].last_layer = layers.size() - 1;
    for (auto& u : unit_of_layer) u = 0;
  }
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (unit_of_parameter[p] == SIZE_MAX) {
      throw std::invalid_argument("sharded data parallelism: parameter " + names[p] +
                                  " belongs to no layer of the model's chain");
    }
  }
  std::vector<UnitParameters> described;
  for (const auto& unit : units) {
    const auto& layer = layers[unit.first_layer];
    UnitParameters d{options.unit == ShardUnitKind::kModel ? "model" : layer.name, {}};
    for (size_t p : unit.members) d.numels.push_back(parameters[p].numel());
    described.push_back(std::move(d));
  }
  layout = make_shard_layout(described, world());
}

// Each unit's parameters become views of one padded flat buffer; this rank's shard is its
// chunk (stage 3: a copy of it, the buffer released until forward needs it).
void ShardedDataParallel::State::build_buffers() {
  torch::NoGradGuard no_grad;
  for (size_t u = 0; u < units.size(); ++u) {
    UnitState& unit = units[u];
    const ShardUnit& shape = layout.units[u];
    const at::Tensor& first = parameters[unit.members.front()];
    unit.full = at::zeros({shape.padded_elements}, first.options());
    int64_t offset = 0;
    for (size_t p : unit.members) {
      at::Tensor& parameter = parameters[p];
      const int64_t n = parameter.numel();
      at::Tensor slot = unit.full.narrow(0, offset, n);
      slot.copy_(parameter.detach().reshape({-1}));
      parameter.set_data(slot.view(parameter.sizes()));
      unit.offsets.push_back(offset);
      offset += n;
    }
    const at::Tensor chunk =
        unit.full.narrow(0, rank() * shape.shard_elements, shape.shard_elements);
    unit.shard = (shards_parameters() ? chunk.clone() : chunk.detach()).requires_grad_(true);
    unit.pending = unit.members.size();
    if (shards_parameters()) release(u);
  }
}

void ShardedDataParallel::State::register_gradient_hooks(const std::weak_ptr<State>& weak) {
  for (size_t p = 0; p < parameters.size(); ++p) {
    auto accumulator = torch::autograd::impl::grad_accumulator(parameters[p]);
    accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [weak, p](const torch::autograd::variable_list& outputs,
                  const torch::autograd::variable_list&) {
          if (auto state = weak.lock()) state->on_gradient_ready(p);
          return outputs;
        }));
    accumulators.push_back(std::move(accumulator));
  }
}

void ShardedDataParallel::State::queue_gather(size_t u) {
  UnitState& unit = units[u];
  if (unit.gathered || unit.gathering.valid()) return;
  const at::Tensor full = unit.full;
  const at::Tensor shard = unit.shard.detach();
  const bool allocate = shards_parameters();
  const std::string name = "allgather " + layout.units[u].name;
  unit.gathering = queue.push([this, full, shard, allocate, name] {
    const c10::DeviceGuard device(full.device());
    if (allocate) allocate_storage(full);
    timed(name, runtime::TraceCategory::kAllGather,
          [&] { group->all_gather(full, shard)->wait(); });
  });
}

void ShardedDataParallel::State::gather_now(size_t u) {
  UnitState& unit = units[u];
  if (unit.gathered) return;
  queue_gather(u);
  std::shared_future<void> done = std::move(unit.gathering);
  unit.gathering = {};
  done.get();
  unit.gathered = true;
}

void ShardedDataParallel::State::release(size_t u) {
  UnitState& unit = units[u];
  if (!shards_parameters()) return;
  if (unit.gathering.valid()) gather_now(u);  // a queued gather must land before the free
  release_storage(unit.full);
  unit.gathered = false;
}

void ShardedDataParallel::State::on_gradient_ready(size_t parameter) {
  UnitState& unit = units[unit_of_parameter[parameter]];
  if (unit.pending > 0 && --unit.pending == 0) reduce_scatter(unit_of_parameter[parameter]);
}

// Stages 2 and 3: the unit's gradients into one padded buffer (a missing one as zeros), freed
// from the parameters, and reduce-scattered behind the rest of backward.
void ShardedDataParallel::State::reduce_scatter(size_t u) {
  UnitState& unit = units[u];
  unit.pending = 0;
  at::Tensor flat = at::zeros({layout.units[u].padded_elements}, unit.full.options());
  for (size_t m = 0; m < unit.members.size(); ++m) {
    at::Tensor& parameter = parameters[unit.members[m]];
    if (parameter.grad().defined()) {
      flat.narrow(0, unit.offsets[m], parameter.numel()).copy_(parameter.grad().reshape({-1}));
      parameter.mutable_grad().reset();
    }
  }
  release(u);
  const int64_t shard_elements = layout.units[u].shard_elements;
  const std::string name = "reducescatter " + layout.units[u].name;
  unit.scattering = queue.push([this, &unit, flat, shard_elements, name] {
    const c10::DeviceGuard device(flat.device());
    at::Tensor reduced = at::empty({shard_elements}, flat.options());
    timed(name, runtime::TraceCategory::kReduceScatter,
          [&] { group->reduce_scatter_sum(reduced, flat); });
    reduced.div_(world());
    unit.shard_grad = reduced;
  });
}

// Stage 1: the shard's slice of the all-reduced gradients, gathered from the parameters it
// overlaps.
void ShardedDataParallel::State::shard_gradients_from_full(size_t u) {
  UnitState& unit = units[u];
  const int64_t c = layout.units[u].shard_elements;
  const int64_t begin = rank() * c, end = begin + c;
  unit.shard_grad = at::zeros({c}, unit.full.options());
  for (size_t m = 0; m < unit.members.size(); ++m) {
    const at::Tensor& parameter = parameters[unit.members[m]];
    const int64_t first = std::max(begin, unit.offsets[m]);
    const int64_t last = std::min(end, unit.offsets[m] + parameter.numel());
    if (first >= last || !parameter.grad().defined()) continue;
    unit.shard_grad.narrow(0, first - begin, last - first)
        .copy_(parameter.grad().reshape({-1}).narrow(0, first - unit.offsets[m], last - first));
  }
}

ShardedDataParallel::ShardedDataParallel(std::shared_ptr<runtime::ZooModel> model,
                                         runtime::Communicator& group, ShardedOptions options,
                                         const runtime::WorkerOptimizer& optimizer)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.model = std::move(model);
  s.group = &group;
  s.options = options;
  for (const auto& item : s.model->named_parameters()) {
    s.names.push_back(item.key());
    s.parameters.push_back(item.value());
  }
  s.find_units();
  s.build_buffers();
  std::vector<at::Tensor> shards;
  for (const auto& unit : s.units) shards.push_back(unit.shard);
  s.optimizer = runtime::make_optimizer(optimizer, shards);
  if (options.stage == ZeroStage::kOptimizerState) {
    ReducerOptions reducer = options.reducer;
    reducer.average = true;
    s.reducer = std::make_unique<GradientReducer>(s.parameters, s.names, group, reducer);
  } else {
    s.register_gradient_hooks(state_);
  }
}

ShardedDataParallel::~ShardedDataParallel() = default;

at::Tensor ShardedDataParallel::forward(const at::Tensor& input) {
  State& s = *state_;
  if (!s.shards_parameters()) return s.model->forward(input);
  std::weak_ptr<State> weak = state_;
  at::Tensor x = input;
  for (size_t l = 0; l < s.unit_of_layer.size(); ++l) {
    const int u = s.unit_of_layer[l];
    if (u >= 0 && l == s.units[u].first_layer) {
      s.gather_now(u);
      if (s.options.prefetch && static_cast<size_t>(u) + 1 < s.units.size()) s.queue_gather(u + 1);
    }
    x = s.model->forward_layers(x, l, l);
    if (u >= 0 && l == s.units[u].last_layer) {
      // Backward reaches the unit when the gradient of its output arrives: gather it again
      // there, and queue the unit before it.
      if (x.requires_grad()) {
        x.register_hook([weak, u](const at::Tensor&) {
          if (auto state = weak.lock()) {
            state->gather_now(u);
            if (state->options.prefetch && u > 0) state->queue_gather(u - 1);
          }
        });
      }
      s.release(u);
    }
  }
  return x;
}

void ShardedDataParallel::finish_backward() {
  State& s = *state_;
  if (s.reducer) {
    s.reducer->finish_backward();
    for (size_t u = 0; u < s.units.size(); ++u) s.shard_gradients_from_full(u);
    return;
  }
  // A unit some of whose parameters got no gradient is reduced now, the missing ones as zeros.
  for (size_t u = 0; u < s.units.size(); ++u) {
    if (s.units[u].pending > 0) s.reduce_scatter(u);
  }
  for (auto& unit : s.units) {
    unit.scattering.get();
    unit.scattering = {};
    unit.pending = unit.members.size();
  }
  // Every unit was released by its reduce-scatter; one prefetched after it (a forward whose
  // loss skips later units, so that backward reaches them out of order) is waited for and freed.
  for (size_t u = 0; u < s.units.size(); ++u) s.release(u);
  s.flush_timings();
}

void ShardedDataParallel::step() {
  State& s = *state_;
  for (auto& unit : s.units) unit.shard.mutable_grad() = unit.shard_grad;
  s.optimizer->step();
  if (s.options.stage == ZeroStage::kOptimizerState) {
    // Stage 1 keeps the whole gradients; the shard's copy was the step's only.
    for (auto& unit : s.units) {
      unit.shard.mutable_grad().reset();
      unit.shard_grad.reset();
    }
  }
  if (!s.shards_parameters()) {
    // Every unit's all-gather in flight at once (the collective thread is idle here: backward's
    // collectives are done), each in place: the shard is its own chunk of the buffer.
    std::vector<std::unique_ptr<runtime::CommWork>> works;
    const double start = runtime::TraceRecorder::now_us();
    for (auto& unit : s.units) works.push_back(s.group->all_gather(unit.full, unit.shard.detach()));
    for (size_t u = 0; u < works.size(); ++u) {
      works[u]->wait();
      if (s.trace != nullptr) {
        s.trace->add("allgather " + s.layout.units[u].name, runtime::TraceCategory::kAllGather,
                     start, runtime::TraceRecorder::now_us());
      }
    }
  }
  s.flush_timings();
}

void ShardedDataParallel::zero_grad() {
  State& s = *state_;
  for (auto& unit : s.units) {
    unit.shard.mutable_grad().reset();
    unit.shard_grad.reset();
  }
  for (auto& parameter : s.parameters) parameter.mutable_grad().reset();
}

const ShardLayout& ShardedDataParallel::layout() const { return state_->layout; }

torch::optim::Optimizer& ShardedDataParallel::optimizer() { return *state_->optimizer; }

std::vector<at::Tensor> ShardedDataParallel::held_parameters() const {
  std::vector<at::Tensor> held;
  for (const auto& unit : state_->units) {
    held.push_back(state_->shards_parameters() ? unit.shard : unit.full);
  }
  return held;
}

std::vector<at::Tensor> ShardedDataParallel::held_gradients() const {
  std::vector<at::Tensor> held;
  if (state_->options.stage == ZeroStage::kOptimizerState) {
    for (const auto& p : state_->parameters) held.push_back(p.grad());
  } else {
    for (const auto& unit : state_->units) held.push_back(unit.shard.grad());
  }
  return held;
}

std::vector<at::Tensor> ShardedDataParallel::full_parameters() {
  State& s = *state_;
  std::vector<at::Tensor> whole(s.parameters.size());
  for (size_t u = 0; u < s.units.size(); ++u) {
    s.gather_now(u);
    for (size_t p : s.units[u].members) whole[p] = s.parameters[p].detach().clone();
    s.release(u);
  }
  return whole;
}

void ShardedDataParallel::set_trace(runtime::TraceRecorder* trace) {
  state_->trace = trace;
  if (state_->reducer) state_->reducer->set_trace(trace);
}

}  // namespace baselines
