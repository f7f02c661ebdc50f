#include "runtime/pipeline/pipeline_executor.h"

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "runtime/compat/torch_compat.h"
#include "runtime/device/allocation_tracker.h"
#include "runtime/device/cuda_support.h"
#include "runtime/models/moe.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/pipeline/layout_schedule.h"
#include "runtime/pipeline/weight_pass.h"

namespace runtime {

namespace {

double elapsed_ms(double start_us, double end_us) { return (end_us - start_us) / 1000.0; }

long long bytes_of(const at::Tensor& t) {
  return t.defined() ? static_cast<long long>(t.numel() * t.element_size()) : 0;
}

using Kind = PipelineAction::Kind;

// Whether the schedule runs stage c's backward as separate input and weight passes on this
// rank. Not with recomputed blocks: a recomputed block's backward accumulates its weights'
// gradients together with its input's.
bool splits_backward(const std::vector<PipelineAction>& actions, int c, const ZooModel& model) {
  const bool split = std::any_of(actions.begin(), actions.end(), [&](const PipelineAction& a) {
    return a.stage == c && (a.kind == Kind::kBackwardInput || a.kind == Kind::kBackwardWeight);
  });
  if (split && model.activation_checkpointing()) {
    throw std::invalid_argument(
        "activation checkpointing cannot run under a schedule that splits backward (I, W)");
  }
  return split;
}

}  // namespace

struct PipelineStage::Impl {
  ZooModel& model;
  PipelineOptions options;
  Communicator& world;
  Communicator* replicas;
  int micro_batches = 1;
  int replica = 0;
  std::vector<PipelineAction> actions;  // this rank's, with sends and receives
  std::vector<at::Tensor> parameters;
  std::vector<std::string> parameter_names;
  std::unique_ptr<GradientSync> reducer;
  std::shared_ptr<AllocationTracker> tracker;
  std::vector<MoeFeedForwardImpl*> mixtures;  // of the rank's layers

  // What a forward keeps for its backward.
  struct Stash {
    torch::Tensor input;      // requires grad on every stage but the first
    torch::Tensor output;     // the scaled loss on the last stage
    torch::Tensor auxiliary;  // the stage's weighted balancing loss (not on the last stage)
    // A stage that splits its backward: each layer's input (a leaf cut from the layer before)
    // and output, and after I the gradient of each output, which W differentiates with.
    std::vector<torch::Tensor> layer_inputs, layer_outputs, output_gradients;
    // Per layer with weights: its weight nodes, captured during I and run alone in W.
    std::vector<std::shared_ptr<WeightPass>> weight_passes;
    long long boundary_bytes = 0;
  };
  // One of the rank's stages.
  struct Stage {
    int index = 0;
    const StageAssignment* assignment = nullptr;
    const StageAssignment* previous = nullptr;      // null on the model's first stage
    const StageAssignment* next = nullptr;          // null on the last
    bool previous_here = false, next_here = false;  // the neighbour runs on this rank
    bool split_backward = false;                    // the schedule runs I and W on it
    std::vector<int64_t> input_shape, output_shape;
    c10::ScalarType input_dtype = c10::kFloat, output_dtype = c10::kFloat;
    std::vector<std::vector<torch::Tensor>> layer_parameters;  // per layer of the stage
    std::map<int, Stash> stash;
    bool first() const { return previous == nullptr; }
    bool last() const { return next == nullptr; }
  };
  std::map<int, Stage> stages;
  // Tensors handed between stages of this rank, by (receiving stage, micro-batch): activations
  // going down, input gradients going up; and the input gradients waiting for their send.
  std::map<std::pair<int, int>, torch::Tensor> local_activations, local_gradients, outgoing;

  // Receives posted, by (stage, micro-batch, gradient?).
  struct PostedReceive {
    std::vector<torch::Tensor> pieces;
    std::vector<std::unique_ptr<CommWork>> works;
    std::vector<int> sources;
    long long bytes = 0;
    double posted_us = 0;
  };
  std::map<std::tuple<int, int, bool>, PostedReceive> posted;
  // Sends in flight; each holds its tensor until waited for.
  struct PendingSend {
    int stage;
    int micro_batch;
    bool activations;
    std::unique_ptr<CommWork> work;
    torch::Tensor tensor;
  };
  std::vector<PendingSend> pending_sends;

  Impl(ZooModel& m, PipelineOptions o, Communicator& w, Communicator* r)
      : model(m),
        options(std::move(o)),
        world(w),
        replicas(r),
        tracker(std::make_shared<AllocationTracker>(options.device.type())) {}

  // Tags name the boundary after stage `boundary` and the micro-batch: unique per message.
  int tag(int boundary, int micro_batch, bool gradient) const {
    return 2 * (boundary * micro_batches + micro_batch) + (gradient ? 1 : 0);
  }

  // Waits for the sends `done_with` selects; returns the milliseconds it took.
  template <typename Predicate>
  double wait_sends(Predicate done_with) {
    const double start = TraceRecorder::now_us();
    std::vector<PendingSend> still;
    for (auto& send : pending_sends) {
      if (done_with(send)) {
        send.work->wait();
      } else {
        still.push_back(std::move(send));
      }
    }
    pending_sends = std::move(still);
    return elapsed_ms(start, TraceRecorder::now_us());
  }

  // The end of a compute phase as the device sees it (PipelineOptions::device says why).
  double compute_done_us() const {
    if (options.device.is_cuda()) cuda::synchronize(options.device.index());
    return TraceRecorder::now_us();
  }

  // The balancing loss of the rank's mixtures from the forward just run, weighted by `share` of
  // the global batch; undefined without mixtures or weight.
  torch::Tensor auxiliary_loss(double share) const {
    if (options.auxiliary_loss_weight == 0.0) return {};
    const torch::Tensor total = summed_auxiliary_loss(mixtures);
    return total.defined() ? total * (options.auxiliary_loss_weight * share) : total;
  }

  SampleRange micro_rows(int64_t global_batch, int m) const {
    return micro_batch_samples(global_batch, micro_batches, m);
  }
  SampleRange my_rows(const Stage& stage, const SampleRange& rows) const {
    return replica_samples(rows.size(), static_cast<int>(stage.assignment->ranks.size()), replica);
  }

  // The transfers across the boundary between `upper` and the stage after it, seen from this
  // replica of `stage`.
  std::vector<SliceTransfer> transfers_after(const StageAssignment& upper,
                                             const StageAssignment& lower, int64_t rows) const {
    return slice_transfers(rows, static_cast<int>(upper.ranks.size()),
                           static_cast<int>(lower.ranks.size()));
  }

  // Posts the receives of a tensor of `rows` rows: activations from the stage before `stage`,
  // or (gradient) the gradient of its output from the stage after it.
  void post_receive(const Stage& stage, int m, bool gradient, int64_t rows) {
    PostedReceive receive;
    receive.posted_us = TraceRecorder::now_us();
    const StageAssignment& peers = gradient ? *stage.next : *stage.previous;
    const auto transfers = gradient ? transfers_after(*stage.assignment, peers, rows)
                                    : transfers_after(peers, *stage.assignment, rows);
    const auto& shape = gradient ? stage.output_shape : stage.input_shape;
    const auto dtype = gradient ? stage.output_dtype : stage.input_dtype;
    const int boundary = gradient ? stage.index : stage.index - 1;
    for (const auto& t : transfers) {
      if ((gradient ? t.source_replica : t.destination_replica) != replica) continue;
      const int peer = peers.ranks[gradient ? t.destination_replica : t.source_replica];
      std::vector<int64_t> sizes{t.rows.size()};
      sizes.insert(sizes.end(), shape.begin(), shape.end());
      receive.pieces.push_back(
          torch::empty(sizes, torch::TensorOptions().dtype(dtype).device(options.device)));
      receive.works.push_back(world.recv(receive.pieces.back(), peer, tag(boundary, m, gradient)));
      receive.bytes += bytes_of(receive.pieces.back());
      receive.sources.push_back(peer);
    }
    posted[{stage.index, m, gradient}] = std::move(receive);
  }

  // Waits for a posted receive; the pieces concatenated in row order.
  torch::Tensor take_receive(const Stage& stage, int m, bool gradient,
                             PipelineIterationStats& stats, TraceRecorder& trace) {
    const auto found = posted.find({stage.index, m, gradient});
    if (found == posted.end()) throw std::logic_error("a receive the schedule did not post");
    PostedReceive receive = std::move(found->second);
    posted.erase(found);
    const double start = TraceRecorder::now_us();
    for (auto& w : receive.works) w->wait();
    const double end = TraceRecorder::now_us();
    stats.recv_wait_ms += elapsed_ms(start, end);
    const std::string what = gradient ? "gradients" : "activations";
    trace.add("recv " + what + " mb" + std::to_string(m), TraceCategory::kRecv, receive.posted_us,
              end,
              {{"micro_batch", m},
               {"stage", stage.index},
               {"bytes", receive.bytes},
               {"peer", receive.sources}});
    return receive.pieces.size() == 1 ? receive.pieces[0] : torch::cat(receive.pieces, 0);
  }

  // Sends this replica's rows of `tensor` (starting at micro-batch row `first_row`): the
  // stage's output down, or (gradient) its input gradient up.
  void send(const Stage& stage, int m, bool gradient, const torch::Tensor& tensor,
            int64_t first_row, int64_t rows, PipelineIterationStats& stats, TraceRecorder& trace) {
    const double start = TraceRecorder::now_us();
    const StageAssignment& peers = gradient ? *stage.previous : *stage.next;
    const auto transfers = gradient ? transfers_after(peers, *stage.assignment, rows)
                                    : transfers_after(*stage.assignment, peers, rows);
    const int boundary = gradient ? stage.index - 1 : stage.index;
    long long bytes = 0;
    std::vector<int> destinations;
    for (const auto& t : transfers) {
      if ((gradient ? t.destination_replica : t.source_replica) != replica) continue;
      const int peer = peers.ranks[gradient ? t.source_replica : t.destination_replica];
      torch::Tensor piece =
          tensor.detach().narrow(0, t.rows.begin - first_row, t.rows.size()).contiguous();
      pending_sends.push_back(
          {stage.index, m, !gradient, world.send(piece, peer, tag(boundary, m, gradient)), piece});
      bytes += bytes_of(piece);
      destinations.push_back(peer);
    }
    const double end = TraceRecorder::now_us();
    stats.send_ms += elapsed_ms(start, end);
    stats.bytes_sent += bytes;
    const std::string what = gradient ? "gradients" : "activations";
    trace.add(
        "send " + what + " mb" + std::to_string(m), TraceCategory::kSend, start, end,
        {{"micro_batch", m}, {"stage", stage.index}, {"bytes", bytes}, {"peer", destinations}});
  }

  // The stage's layers on `input`; a stage that splits its backward keeps each layer's input
  // (cut from the graph before it) and output.
  torch::Tensor run_layers(Stage& stage, const torch::Tensor& input, Stash& entry) {
    const int first = stage.assignment->first_layer, last = stage.assignment->last_layer;
    if (!stage.split_backward) return model.forward_layers(input, first, last);
    torch::Tensor x = input;
    for (int layer = first; layer <= last; ++layer) {
      if (layer > first) {
        x = x.detach();
        if (x.is_floating_point()) x.requires_grad_(true);
      }
      entry.layer_inputs.push_back(x);
      x = model.forward_layers(x, layer, layer);
      entry.layer_outputs.push_back(x);
    }
    return x;
  }

  void forward(Stage& stage, int m, const at::Tensor& global_input, const at::Tensor& global_target,
               PipelineIterationStats& stats, TraceRecorder& trace);
  void backward(Stage& stage, const PipelineAction& action, PipelineIterationStats& stats,
                TraceRecorder& trace);
  void build_stages(const ScheduleTable& table, int position, const at::Tensor& sample_input);
  void input_gradients(Stash& entry, const torch::Tensor& output_gradient);
  void weight_gradients(Stage& stage, Stash& entry);
  void find_weight_nodes(const Stage& stage, Stash& entry) const;
  void run_action(const PipelineAction& action, const at::Tensor& global_input,
                  const at::Tensor& global_target, PipelineIterationStats& stats,
                  TraceRecorder& trace);
  void finish_iteration(PipelineIterationStats& stats, TraceRecorder& trace);
};

void PipelineStage::Impl::forward(Stage& stage, int m, const at::Tensor& global_input,
                                  const at::Tensor& global_target, PipelineIterationStats& stats,
                                  TraceRecorder& trace) {
  const int64_t global_batch = global_input.size(0);
  const SampleRange rows = micro_rows(global_batch, m);
  const SampleRange mine = my_rows(stage, rows);
  Stash entry;
  if (stage.first()) {
    entry.input = global_input.narrow(0, rows.begin + mine.begin, mine.size());
  } else {
    if (stage.previous_here) {
      const auto found = local_activations.find({stage.index, m});
      if (found == local_activations.end()) throw std::logic_error("a hand-over not made");
      entry.input = found->second.detach();
      local_activations.erase(found);
    } else {
      entry.input = take_receive(stage, m, /*gradient=*/false, stats, trace);
      entry.boundary_bytes += bytes_of(entry.input);
    }
    if (entry.input.is_floating_point()) entry.input.requires_grad_(true);
  }
  const double start = TraceRecorder::now_us();
  if (stats.compute_start_us == 0) stats.compute_start_us = start;
  const double share = static_cast<double>(mine.size()) / static_cast<double>(global_batch);
  torch::Tensor output;
  {
    const PrecisionScope precision(options.precision, options.device.type());
    output = run_layers(stage, entry.input, entry);
    if (stage.last()) {
      const torch::Tensor target = global_target.narrow(0, rows.begin + mine.begin, mine.size());
      output = training_loss(options.loss, output, target) * share;
      if (stage.split_backward) entry.layer_outputs.back() = output;  // the loss is its end
    }
  }
  if (stage.split_backward) find_weight_nodes(stage, entry);
  entry.auxiliary = auxiliary_loss(share);
  if (entry.auxiliary.defined()) stats.loss += entry.auxiliary.item<double>();
  if (stage.last()) {
    stats.loss += output.item<double>();
    if (entry.auxiliary.defined()) output = output + entry.auxiliary;
    entry.auxiliary = torch::Tensor();
  }
  const double end = compute_done_us();
  stats.forward_ms += elapsed_ms(start, end);
  trace.add("forward mb" + std::to_string(m), TraceCategory::kForward, start, end,
            {{"micro_batch", m}, {"stage", stage.index}});
  if (!stage.last()) {
    if (stage.next_here) {
      local_activations[{stage.index + 1, m}] = output;
    } else {
      entry.boundary_bytes += bytes_of(output);
    }
  }
  entry.output = output;
  stage.stash.emplace(m, std::move(entry));
}

void PipelineStage::Impl::input_gradients(Stash& entry, const torch::Tensor& output_gradient) {
  const int layers = static_cast<int>(entry.layer_outputs.size());
  entry.output_gradients.assign(layers, torch::Tensor());
  torch::Tensor gradient = output_gradient;  // undefined at the loss: d loss / d loss
  for (int l = layers - 1; l >= 0; --l) {
    entry.output_gradients[l] = gradient;
    const torch::Tensor& in = entry.layer_inputs[l];
    const torch::Tensor& out = entry.layer_outputs[l];
    if (!in.requires_grad() || !out.requires_grad()) break;  // nothing below needs a gradient
    const torch::autograd::variable_list seed = gradient.defined()
                                                    ? torch::autograd::variable_list{gradient}
                                                    : torch::autograd::variable_list{};
    const auto& pass = entry.weight_passes[l];
    if (pass) pass->arm(true);
    gradient = torch::autograd::grad({out}, {in}, seed, /*retain_graph=*/true,
                                     /*create_graph=*/false, /*allow_unused=*/true)[0];
    if (pass) pass->arm(false);
    if (!gradient.defined()) gradient = torch::zeros_like(in);
  }
  if (entry.input.defined() && entry.input.requires_grad()) entry.input.mutable_grad() = gradient;
}

void PipelineStage::Impl::find_weight_nodes(const Stage& stage, Stash& entry) const {
  entry.weight_passes.assign(entry.layer_outputs.size(), nullptr);
  for (size_t l = 0; l < entry.layer_outputs.size(); ++l) {
    const torch::Tensor& out = entry.layer_outputs[l];
    // A layer whose input needs no gradient (the model's first) has no I: its W is its whole
    // backward, run as one.
    if (stage.layer_parameters[l].empty() || !out.requires_grad() ||
        !entry.layer_inputs[l].requires_grad()) {
      continue;
    }
    entry.weight_passes[l] =
        std::make_shared<WeightPass>(out, entry.layer_inputs[l], stage.layer_parameters[l]);
  }
}

void PipelineStage::Impl::weight_gradients(Stage& stage, Stash& entry) {
  for (size_t l = 0; l < entry.layer_outputs.size(); ++l) {
    const torch::Tensor& out = entry.layer_outputs[l];
    const auto& weights = stage.layer_parameters[l];
    if (weights.empty() || !out.requires_grad()) continue;
    if (entry.weight_passes[l] && entry.weight_passes[l]->run()) continue;
    const torch::Tensor& gradient = entry.output_gradients[l];
    torch::autograd::backward({out},
                              gradient.defined() ? torch::autograd::variable_list{gradient}
                                                 : torch::autograd::variable_list{},
                              /*retain_graph=*/false, /*create_graph=*/false, weights);
  }
}

// B or I (and the W a B includes) of micro-batch `action.micro_batch`, or a W: the output
// gradient from the next stage (the last stage starts from its loss), autograd through the
// stage, the input gradient kept for the previous stage.
void PipelineStage::Impl::backward(Stage& stage, const PipelineAction& action,
                                   PipelineIterationStats& stats, TraceRecorder& trace) {
  const int m = action.micro_batch;
  auto found = stage.stash.find(m);
  if (found == stage.stash.end()) throw std::logic_error("backward before forward");
  Stash& entry = found->second;
  const bool weight_only = action.kind == Kind::kBackwardWeight;
  torch::Tensor output_gradient;
  if (!weight_only && !stage.last()) {
    if (stage.next_here) {
      const auto handed = local_gradients.find({stage.index, m});
      if (handed == local_gradients.end()) throw std::logic_error("a gradient not handed over");
      output_gradient = handed->second;
      local_gradients.erase(handed);
    } else {
      output_gradient = take_receive(stage, m, /*gradient=*/true, stats, trace);
      // The next stage sent this gradient after it received our activations: that send is
      // complete, and waiting for it now frees the activations it held.
      stats.send_ms += wait_sends([&](const PendingSend& send) {
        return send.activations && send.stage == stage.index && send.micro_batch == m;
      });
    }
  }
  const double start = TraceRecorder::now_us();
  if (stage.split_backward) {
    if (!weight_only) input_gradients(entry, output_gradient);
    if (action.kind != Kind::kBackwardInput) weight_gradients(stage, entry);
  } else if (stage.last()) {
    torch::autograd::backward({entry.output});
  } else if (entry.auxiliary.defined()) {
    torch::autograd::backward({entry.output, entry.auxiliary},
                              {output_gradient, torch::ones_like(entry.auxiliary)});
  } else if (entry.output.requires_grad()) {
    torch::autograd::backward({entry.output}, {output_gradient});
  }  // else a first stage without parameters (a flatten alone): nothing to differentiate
  const double end = compute_done_us();
  stats.backward_ms += elapsed_ms(start, end);
  if (weight_only) stats.backward_weight_ms += elapsed_ms(start, end);
  const char* name = action.kind == Kind::kBackward        ? "backward mb"
                     : action.kind == Kind::kBackwardInput ? "backward-input mb"
                                                           : "backward-weight mb";
  trace.add(name + std::to_string(m),
            weight_only ? TraceCategory::kBackwardWeight : TraceCategory::kBackward, start, end,
            {{"micro_batch", m}, {"stage", stage.index}});
  if (!weight_only && !stage.first()) {
    const torch::Tensor gradient = entry.input.grad();
    if (stage.previous_here) {
      local_gradients[{stage.index - 1, m}] = gradient;
    } else {
      outgoing[{stage.index, m}] = gradient;
    }
  }
  if (action.kind != Kind::kBackwardInput) stage.stash.erase(found);
}

void PipelineStage::Impl::run_action(const PipelineAction& action, const at::Tensor& global_input,
                                     const at::Tensor& global_target, PipelineIterationStats& stats,
                                     TraceRecorder& trace) {
  Stage& stage = stages.at(action.stage);
  const int m = action.micro_batch;
  const SampleRange rows = micro_rows(global_input.size(0), m);
  const SampleRange mine = my_rows(stage, rows);
  switch (action.kind) {
    case Kind::kForward:
      forward(stage, m, global_input, global_target, stats, trace);
      break;
    case Kind::kBackward:
    case Kind::kBackwardInput:
    case Kind::kBackwardWeight:
      backward(stage, action, stats, trace);
      break;
    case Kind::kRecvActivations:
      post_receive(stage, m, /*gradient=*/false, rows.size());
      break;
    case Kind::kRecvGradients:
      post_receive(stage, m, /*gradient=*/true, rows.size());
      break;
    case Kind::kSendActivations:
      send(stage, m, /*gradient=*/false, stage.stash.at(m).output, mine.begin, rows.size(), stats,
           trace);
      break;
    case Kind::kSendGradients: {
      const auto found = outgoing.find({stage.index, m});
      if (found == outgoing.end()) throw std::logic_error("a gradient send before its backward");
      send(stage, m, /*gradient=*/true, found->second, mine.begin, rows.size(), stats, trace);
      outgoing.erase(found);
      break;
    }
  }
}

// The end of an iteration: every send complete, then the replicas' gradient sum (an all-reduce,
// or a reduce-scatter where they shard the stage).
void PipelineStage::Impl::finish_iteration(PipelineIterationStats& stats, TraceRecorder& trace) {
  {
    const double start = TraceRecorder::now_us();
    stats.send_ms += wait_sends([](const PendingSend&) { return true; });
    trace.add("send wait", TraceCategory::kSend, start, TraceRecorder::now_us());
  }
  if (reducer) {
    const double start = TraceRecorder::now_us();
    reducer->finish_backward();
    const double end = TraceRecorder::now_us();
    stats.allreduce_ms = elapsed_ms(start, end);
    const Stage& first = stages.begin()->second;
    const TraceCategory collective = reducer->collective();
    trace.add(std::string(category_name(collective)) + " stage " + std::to_string(first.index),
              collective, start, end,
              {{"replicas", static_cast<int>(first.assignment->ranks.size())}});
  }
}

void PipelineStage::Impl::build_stages(const ScheduleTable& table, int position,
                                       const at::Tensor& sample_input) {
  const auto& layout = options.layout;
  const std::vector<int> positions = layout.stage_positions();
  for (int c : layout.stages_of(world.rank())) {
    Stage stage;
    stage.index = c;
    stage.assignment = &layout.stages[c];
    if (c > 0) stage.previous = &layout.stages[c - 1];
    if (c + 1 < layout.stage_count()) stage.next = &layout.stages[c + 1];
    stage.previous_here = c > 0 && positions[c - 1] == position;
    stage.next_here = c + 1 < layout.stage_count() && positions[c + 1] == position;
    stage.split_backward = splits_backward(table.actions[position], c, model);
    for (int i = stage.assignment->first_layer; i <= stage.assignment->last_layer; ++i) {
      const Layer& layer = model.layers()[i];
      std::vector<torch::Tensor> weights;
      for (const auto& item : layer.module.ptr()->named_parameters()) {
        parameters.push_back(item.value());
        parameter_names.push_back(layer.name + "." + item.key());
        if (item.value().requires_grad()) weights.push_back(item.value());
      }
      stage.layer_parameters.push_back(std::move(weights));
      const auto found = mixtures_of(*layer.module.ptr());
      if (!found.empty() && stage.split_backward && options.auxiliary_loss_weight != 0.0) {
        throw std::invalid_argument(
            "stage " + std::to_string(c) +
            " holds mixture-of-experts layers, whose balancing loss the split backward (I and W) "
            "does not carry: run it with a schedule without I and W (gpipe, dapple, "
            "interleaved_1f1b)");
      }
      for (auto* mixture : found) mixtures.push_back(mixture);
    }
    stages.emplace(c, std::move(stage));
  }
  // Boundary shapes and dtypes from one sample through the whole model on the stage's device
  // (eval mode: BatchNorm cannot train on one sample; shapes are the same).
  torch::NoGradGuard no_grad;
  const PrecisionScope precision(options.precision, options.device.type());
  const bool was_training = model.is_training();
  model.eval();
  torch::Tensor x = sample_input.to(options.device);
  for (int c = 0; c < layout.stage_count(); ++c) {
    const StageAssignment& assignment = layout.stages[c];
    auto found = stages.find(c);
    if (found != stages.end()) {
      found->second.input_shape.assign(x.sizes().begin() + 1, x.sizes().end());
      found->second.input_dtype = x.scalar_type();
    }
    x = model.forward_layers(x, assignment.first_layer, assignment.last_layer);
    if (found != stages.end()) {
      found->second.output_shape.assign(x.sizes().begin() + 1, x.sizes().end());
      found->second.output_dtype = x.scalar_type();
    }
  }
  model.train(was_training);
}

PipelineStage::PipelineStage(ZooModel& model, PipelineOptions options, Communicator& world,
                             Communicator* replicas, const at::Tensor& sample_input)
    : impl_(std::make_unique<Impl>(model, std::move(options), world, replicas)) {
  Impl& s = *impl_;
  const auto& layout = s.options.layout;
  validate_layout(layout, static_cast<int>(model.layers().size()), world.world_size());
  table_ = with_communication(
      layout_schedule(s.options.schedule, layout, s.options.micro_batches, s.options.schedule_csv));
  stages_ = layout.stages_of(world.rank());
  position_ = layout.stage_positions()[stages_.front()];
  replica_ = s.replica = layout.replica_of(world.rank());
  s.micro_batches = s.options.micro_batches;
  s.actions = table_.actions[position_];
  if ((replicas == nullptr) != (layout.stages[stages_.front()].ranks.size() == 1)) {
    throw std::invalid_argument("a stage with several replicas needs their communicator");
  }
  s.build_stages(table_, position_, sample_input);
  if (replicas != nullptr && !s.parameters.empty()) {
    if (!s.options.replica_sync) {
      throw std::invalid_argument("a stage with replicas needs PipelineOptions::replica_sync");
    }
    s.reducer = s.options.replica_sync(s.parameters, s.parameter_names, *replicas);
  }
}

PipelineStage::~PipelineStage() = default;

std::vector<at::Tensor> PipelineStage::stage_parameters() const { return impl_->parameters; }
std::vector<std::string> PipelineStage::stage_parameter_names() const {
  return impl_->parameter_names;
}

PipelineIterationStats PipelineStage::run_iteration(const at::Tensor& global_input,
                                                    const at::Tensor& global_target,
                                                    TraceRecorder& trace) {
  Impl& s = *impl_;
  PipelineIterationStats stats;
  const int64_t global_batch = global_input.size(0);
  const int replicas_here = static_cast<int>(s.options.layout.stages[stages_.front()].ranks.size());
  for (int m = 0; m < s.micro_batches; ++m) {
    const SampleRange rows = s.micro_rows(global_batch, m);
    if (rows.size() < replicas_here) {
      throw std::invalid_argument("micro-batch " + std::to_string(m) + " has " +
                                  std::to_string(rows.size()) + " samples, fewer than stage " +
                                  std::to_string(stage()) + "'s " + std::to_string(replicas_here) +
                                  " replicas");
    }
  }
  s.tracker->reset();
  c10::DebugInfoGuard track_allocations(c10::DebugInfoKind::PROFILER_STATE, s.tracker);

  int in_flight = 0;
  long long boundary_bytes = 0;
  stats.actions_start_us = TraceRecorder::now_us();
  for (const PipelineAction& action : s.actions) {
    const auto stash_bytes = [&] {
      const auto& stash = s.stages.at(action.stage).stash;
      const auto found = stash.find(action.micro_batch);
      return found == stash.end() ? 0LL : found->second.boundary_bytes;
    };
    const long long held = action.kind == Kind::kForward ? 0 : stash_bytes();
    s.run_action(action, global_input, global_target, stats, trace);
    if (action.is_compute()) stats.compute_end_us = TraceRecorder::now_us();
    if (action.kind == Kind::kForward) {
      boundary_bytes += stash_bytes();
      stats.peak_boundary_bytes = std::max(stats.peak_boundary_bytes, boundary_bytes);
      stats.peak_in_flight = std::max(stats.peak_in_flight, ++in_flight);
    } else if (action.kind == Kind::kBackward || action.kind == Kind::kBackwardWeight) {
      boundary_bytes -= held;
      --in_flight;
    }
  }
  s.finish_iteration(stats, trace);
  stats.span_ms = elapsed_ms(stats.actions_start_us, TraceRecorder::now_us());
  stats.peak_allocated_bytes = s.tracker->peak();
  return stats;
}

}  // namespace runtime
