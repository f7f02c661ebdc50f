#include "runtime/profile/layer_profiler.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <c10/util/ThreadLocalDebugInfo.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <thread>

#include "common/process_clock.h"
#include "runtime/comm/communicator.h"
#include "runtime/device/allocation_tracker.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/moe.h"
#include "runtime/optim/optimizer.h"
#include "runtime/parallel/peerless_group.h"
#include "runtime/parallel/tensor_region.h"
#include "runtime/pipeline/weight_pass.h"
#include "runtime/profile/layer_backward.h"

namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Median and 10th/90th percentiles (linear interpolation between closest ranks).
TimingStats stats_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    const double h = q * static_cast<double>(samples.size() - 1);
    const size_t k = static_cast<size_t>(h);
    if (k + 1 >= samples.size()) return samples.back();
    return samples[k] + (h - static_cast<double>(k)) * (samples[k + 1] - samples[k]);
  };
  return {at(0.5), at(0.1), at(0.9)};
}

struct ChainLayer {
  std::string name;
  std::string kind;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  std::vector<torch::Tensor> parameters;
  std::vector<MoeFeedForwardImpl*> mixtures;  // inside the layer (zoo models)
};

// Each layer runs through the model, as a rank's does: a recomputed block drops its activations
// in forward and runs again in its backward.
std::vector<ChainLayer> zoo_chain(const std::shared_ptr<ZooModel>& model) {
  std::vector<ChainLayer> chain;
  for (size_t i = 0; i < model->layers().size(); ++i) {
    const auto& layer = model->layers()[i];
    chain.push_back({layer.name, layer.kind,
                     [model, i](const torch::Tensor& x) { return model->forward_layers(x, i, i); },
                     layer.module.ptr()->parameters(), mixtures_of(*layer.module.ptr())});
  }
  return chain;
}

std::vector<ChainLayer> script_chain(torch::jit::script::Module& module) {
  std::vector<ChainLayer> chain;
  for (const auto& child : module.named_children()) {
    torch::jit::script::Module submodule = child.value;
    std::vector<torch::Tensor> parameters;
    for (const auto& p : submodule.parameters()) parameters.push_back(p);
    std::string kind = submodule.type()->name() ? submodule.type()->name()->name() : "Module";
    chain.push_back(
        {child.name,
         kind,
         [submodule](const torch::Tensor& x) mutable { return submodule.forward({x}).toTensor(); },
         parameters,
         {}});
  }
  if (chain.empty()) throw std::invalid_argument("the TorchScript module has no children");
  return chain;
}

// The chain a profile times, with what keeps its layers alive (the zoo model or the
// TorchScript module); fills the result's model name and input shape.
struct LoadedChain {
  std::unique_ptr<PeerlessGroup> peerless;  // the slice's tensor group, where it is split
  std::shared_ptr<ZooModel> zoo;
  torch::jit::script::Module script;
  std::vector<ChainLayer> chain;
};

// The zoo's options a rank of the same model and split would build.
ModelOptions zoo_options(const LayerProfileRequest& request, const LayerProfileResult& result) {
  ModelOptions options;
  options.input_shape = result.input_shape;
  options.num_classes = request.num_classes;
  options.depth = request.depth;
  options.width = request.width;
  options.moe = request.moe;
  options.decoder = request.decoder;
  options.tensor_shards = request.tensor;
  options.vocabulary_parallel = request.vocabulary_parallel;
  set_recomputation(options, request.activation_checkpointing, request.recompute_every);
  return options;
}

void check_recomputation(const LayerProfileRequest& request, const ZooModel& model) {
  if (request.activation_checkpointing == "none") return;
  if (!model.has_recomputable_layers()) {
    throw std::invalid_argument(
        "profile: --activation-checkpointing recomputes transformer blocks; " + request.model +
        " has none");
  }
  if (request.split_backward) {
    throw std::invalid_argument(
        "profile: --split-backward times the zero-bubble schedules' I and W, which do not "
        "recompute (leave out --activation-checkpointing)");
  }
}

void load_zoo_chain(const LayerProfileRequest& request, LayerProfileResult& result,
                    LoadedChain& loaded) {
  const ModelEntry* entry = find_model(request.model);
  if (!entry) throw std::invalid_argument("unknown model '" + request.model + "'");
  result.model = request.model;
  result.tensor = request.tensor;
  result.vocabulary_parallel = request.vocabulary_parallel;
  result.activation_checkpointing = request.activation_checkpointing;
  result.recompute_every = request.recompute_every;
  result.input_shape =
      request.input_shape.empty() ? entry->default_input_shape : request.input_shape;
  if (request.vocabulary_parallel && (request.tensor < 2 || request.model != "llama")) {
    throw std::invalid_argument(
        "profile: --vocabulary-parallel splits llama's embedding and "
        "head over --tensor t (2 or more)");
  }
  loaded.zoo = make_model(request.model, zoo_options(request, result));
  check_recomputation(request, *loaded.zoo);
  if (TensorRegion* region = loaded.zoo->tensor_region()) {
    loaded.peerless = std::make_unique<PeerlessGroup>(0, request.tensor);
    region->group = loaded.peerless.get();
  }
  loaded.zoo->train();
  loaded.chain = zoo_chain(loaded.zoo);
}

LoadedChain load_chain(const LayerProfileRequest& request, LayerProfileResult& result) {
  LoadedChain loaded;
  result.optimizer = request.optimizer;
  if (!request.torchscript.empty()) {
    if (request.activation_checkpointing != "none") {
      throw std::invalid_argument(
          "profile: --activation-checkpointing recomputes the zoo's blocks, "
          "not a TorchScript module's");
    }
    std::error_code missing;
    if (!std::filesystem::is_regular_file(request.torchscript, missing)) {
      throw std::invalid_argument("--torchscript '" + request.torchscript + "': no such file");
    }
    try {
      loaded.script = torch::jit::load(request.torchscript);
    } catch (const c10::Error& e) {
      // LibTorch's first sentence: 2.x follows it, on the same line, with advice about
      // corrupted checkpoints.
      std::string why = e.what_without_backtrace();
      why = why.substr(0, why.find('\n'));
      why = why.substr(0, why.find(". "));
      throw std::invalid_argument(request.torchscript + " is not a TorchScript module (" + why +
                                  ")");
    }
    loaded.script.train();
    loaded.chain = script_chain(loaded.script);
    result.model = request.torchscript;
    if (request.input_shape.empty()) {
      throw std::invalid_argument("profile: a TorchScript module needs --input-shape");
    }
    result.input_shape = request.input_shape;
  } else {
    load_zoo_chain(request, result, loaded);
  }
  return loaded;
}

bool has_trainable_weights(const ChainLayer& layer) {
  return std::any_of(layer.parameters.begin(), layer.parameters.end(),
                     [](const torch::Tensor& p) { return p.requires_grad(); });
}

// Whether a zero-bubble stage splits the layer's backward into I and W: it has weights, and its
// output and its input take gradients (else its backward is all I, or all W).
bool backward_splits(const ChainLayer& layer, const torch::Tensor& output,
                     const torch::Tensor& input) {
  return has_trainable_weights(layer) && output.requires_grad() && input.requires_grad();
}

// Which of the chain's layers have trainable parameters (input_needs_gradient's question).
std::vector<bool> trainable_layers(const std::vector<ChainLayer>& chain) {
  std::vector<bool> trainable;
  for (const auto& layer : chain) trainable.push_back(has_trainable_weights(layer));
  return trainable;
}

torch::Tensor as_layer_input(const torch::Tensor& activation, bool needs_gradient) {
  torch::Tensor x = activation.detach();
  if (needs_gradient && x.is_floating_point()) x.requires_grad_(true);
  return x;
}

// The timed range's input: a synthetic batch (token ids for models that read tokens, bert;
// features otherwise) through the layers before the range, run once. Records the batch's
// bytes in the result. `trainable`: trainable_layers of the chain.
torch::Tensor range_input_of(LoadedChain& loaded, const std::vector<bool>& trainable, int64_t batch,
                             int first, LayerProfileResult& result) {
  std::vector<int64_t> shape{batch};
  shape.insert(shape.end(), result.input_shape.begin(), result.input_shape.end());
  const auto& zoo = loaded.zoo;
  const torch::Tensor input = zoo && zoo->input_vocabulary() > 0
                                  ? torch::randint(zoo->input_vocabulary(), shape, torch::kLong)
                                  : torch::randn(shape);
  result.input_bytes = static_cast<int64_t>(input.nbytes());
  torch::Tensor range_input = input;
  {
    torch::NoGradGuard no_grad;
    for (int i = 0; i < first; ++i) range_input = loaded.chain[i].forward(range_input);
  }
  return as_layer_input(range_input, input_needs_gradient(trainable, first, first));
}

}  // namespace

void check_profile_request(const LayerProfileRequest& request) {
  const auto shape_text = [](const std::vector<int64_t>& shape) {
    std::string text;
    for (const int64_t d : shape) text += (text.empty() ? "" : "x") + std::to_string(d);
    return text;
  };
  LayerProfileResult result;
  LoadedChain loaded = load_chain(request, result);
  const std::vector<bool> trainable = trainable_layers(loaded.chain);
  try {
    torch::Tensor activation = range_input_of(loaded, trainable, request.batch, 0, result);
    torch::NoGradGuard no_grad;
    for (auto& layer : loaded.chain) activation = layer.forward(activation);
  } catch (const c10::Error& e) {
    std::string why = e.what_without_backtrace();
    throw std::invalid_argument(
        "the model does not run on a batch of " + std::to_string(request.batch) +
        " at input shape " + shape_text(result.input_shape) + ": " + why.substr(0, why.find('\n')));
  }
}

namespace {

// One layer of the timed range: its input (the previous layer's real output), the gradient
// fed to its backward, its samples.
struct LayerRun {
  int index = 0;
  torch::Tensor input, grad_output;
  std::vector<double> forward_ms, backward_ms;
  std::vector<double> input_ms, weight_ms;  // the split backward's I and W, where timed
  int64_t activation_bytes = 0;
  int64_t stored_bytes = 0;
  std::optional<int64_t> weight_pending_bytes;  // where the backward is split
  int64_t backward_working_bytes = 0;
  std::optional<LayerMixtures> mixtures;
};

// The layer's output on `input`, and the bytes its forward left allocated while the output and
// its graph live: what it keeps for backward (an input it keeps is its producer's, counted
// there) and its output (which the next layer may keep as its input without a copy). Summed
// over a chain, what a forward holds until its backward.
std::pair<torch::Tensor, int64_t> forward_holding(ChainLayer& layer, const torch::Tensor& input) {
  auto tracker = std::make_shared<AllocationTracker>(c10::DeviceType::CPU);
  torch::Tensor output;
  {
    const c10::DebugInfoGuard track(c10::DebugInfoKind::PROFILER_STATE, tracker);
    output = layer.forward(input);
  }
  return {output, tracker->current()};
}

// What the layer's I leaves allocated until its W, on a fresh forward (counted apart from the
// timed passes): the incoming gradients WeightPass captures for W; 0 where the pass does not
// split (no weights, or an input without a gradient: its backward is all W).
int64_t weight_pending_bytes(ChainLayer& layer, const LayerRun& run) {
  const torch::Tensor output = layer.forward(run.input);
  if (!backward_splits(layer, output, run.input)) return 0;
  WeightPass pass(output, run.input, layer.parameters);
  auto tracker = std::make_shared<AllocationTracker>(c10::DeviceType::CPU);
  {
    const c10::DebugInfoGuard track(c10::DebugInfoKind::PROFILER_STATE, tracker);
    pass.arm(true);
    torch::autograd::grad({output}, {run.input}, {torch::randn_like(output)},
                          /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
    pass.arm(false);
  }
  pass.run();
  return tracker->current();
}

// The most the layer's backward allocates above what it starts with, .grad already held (as in
// every backward after a step's first): its intermediate gradients, its weights' before they are
// accumulated, its input's. Everything the tracker sees freed it saw allocated.
int64_t backward_working_bytes(ChainLayer& layer, const torch::Tensor& input) {
  const torch::Tensor first = layer.forward(input);
  if (!first.requires_grad()) return 0;
  const torch::Tensor grad_output = torch::randn_like(first);
  layer_backward(first, grad_output, input, layer.parameters);  // allocates .grad
  if (input.requires_grad()) input.mutable_grad().reset();
  auto tracker = std::make_shared<AllocationTracker>(c10::DeviceType::CPU);
  torch::Tensor output;  // outlives the tracking, so that its graph's frees are inside it
  {
    const c10::DebugInfoGuard track(c10::DebugInfoKind::PROFILER_STATE, tracker);
    output = layer.forward(input);
    tracker->reset();
    layer_backward(output, grad_output, input, layer.parameters);
  }
  return tracker->peak();
}

// What the layer's mixtures hold and dispatched in the forward just run on `input`: every
// token's choices but those dropped for capacity, a row of the width each.
std::optional<LayerMixtures> mixtures_after_forward(const ChainLayer& layer,
                                                    const torch::Tensor& input) {
  if (layer.mixtures.empty()) return std::nullopt;
  LayerMixtures out;
  out.count = static_cast<int>(layer.mixtures.size());
  for (MoeFeedForwardImpl* mixture : layer.mixtures) {
    const int64_t width = mixture->router->weight.size(1);
    const int64_t tokens = input.numel() / width;
    const int64_t rows = tokens * mixture->options().top_k - mixture->dropped_choices();
    out.experts = mixture->options().experts;
    out.dispatch_bytes += rows * width * static_cast<int64_t>(input.element_size());
    for (const auto& p : mixture->experts->parameters()) {
      out.expert_parameter_bytes += static_cast<int64_t>(p.nbytes());
    }
  }
  return out;
}

// Each layer of first..last on the previous one's output: its input, what it holds (and, where
// the backward is split, what its I holds until W) and what its backward works in.
std::vector<LayerRun> layer_runs(std::vector<ChainLayer>& chain, const std::vector<bool>& trainable,
                                 const torch::Tensor& range_input, int first, int last,
                                 bool split_backward) {
  std::vector<LayerRun> runs;
  torch::Tensor activation = range_input;
  for (int i = first; i <= last; ++i) {
    LayerRun run;
    run.index = i;
    run.input = as_layer_input(activation, input_needs_gradient(trainable, i, first));
    const auto [output, held] = forward_holding(chain[i], run.input);
    run.mixtures = mixtures_after_forward(chain[i], run.input);
    activation = output.detach();
    run.activation_bytes = static_cast<int64_t>(activation.nbytes());
    run.stored_bytes = held;
    if (split_backward) run.weight_pending_bytes = weight_pending_bytes(chain[i], run);
    run.backward_working_bytes = backward_working_bytes(chain[i], run.input);
    runs.push_back(std::move(run));
  }
  return runs;
}

// Now on the request's clock (the process's CPU time, else the monotonic wall clock), in
// milliseconds of an arbitrary origin.
double clock_ms(const LayerProfileRequest& request) {
  if (request.cpu_clock) return harness::process_cpu_ms();
  return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}

// Times one piece of work on the request's clock; every piece starts at the co-located
// copies' barrier (when there is one).
struct PieceTimer {
  const LayerProfileRequest& request;

  template <typename Work>
  double operator()(Work&& work) const {
    if (request.before_timed_run) request.before_timed_run();
    const double start = clock_ms(request);
    work();
    return clock_ms(request) - start;
  }
};

// A layer range's training step: forward (with the MSE loss where the range ends the model),
// backward (where it does not, from a fixed random gradient: what a later stage would send
// back), the request's optimizer over the range's parameters (SGD without momentum, the specs'
// default, or AdamW).
class RangeTraining {
 public:
  RangeTraining(std::vector<ChainLayer>& chain, int first, int last, torch::Tensor input,
                const std::string& optimizer)
      : chain_(chain),
        first_(first),
        last_(last),
        ends_model_(last == static_cast<int>(chain.size()) - 1),
        input_(std::move(input)),
        optimizer_(make_optimizer({optimizer, 0.01}, parameters_of(chain, first, last))) {
    torch::NoGradGuard no_grad;
    (ends_model_ ? target_ : grad_output_) = torch::randn_like(run(input_));
  }

  torch::Tensor forward() {
    torch::Tensor output = run(input_);
    return ends_model_ ? torch::mse_loss(output, target_) : output;
  }
  void backward(const torch::Tensor& output) {
    if (ends_model_) {
      output.backward();
    } else if (output.requires_grad()) {
      output.backward(grad_output_);
    }
  }
  void step() { optimizer_->step(); }
  void zero_grad() { optimizer_->zero_grad(); }

 private:
  static std::vector<torch::Tensor> parameters_of(const std::vector<ChainLayer>& chain, int first,
                                                  int last) {
    std::vector<torch::Tensor> parameters;
    for (int i = first; i <= last; ++i) {
      parameters.insert(parameters.end(), chain[i].parameters.begin(), chain[i].parameters.end());
    }
    return parameters;
  }
  torch::Tensor run(torch::Tensor x) {
    for (int i = first_; i <= last_; ++i) x = chain_[i].forward(x);
    return x;
  }

  std::vector<ChainLayer>& chain_;
  const int first_, last_;
  const bool ends_model_;
  const torch::Tensor input_;
  torch::Tensor target_;       // the loss's, where the range ends the model
  torch::Tensor grad_output_;  // the gradient a later stage would send back otherwise
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

// The range's training pass (forward, backward, step, then zeroing the gradients, so that a
// timed forward starts right after its gap as a stage's starts right after its receive) timed
// after each of the request's idle gaps: per repetition every gap once, round-robin, so that
// a drift of the host's speed falls on all alike; each timed pass follows an untimed one by its
// gap (the gap 0 pass right after it, as a profile's passes run). Co-located copies meet at
// their barrier before each gap, so that they sleep and wake together.
std::vector<AfterIdleTiming> time_after_idle(const LayerProfileRequest& request,
                                             RangeTraining& training) {
  std::vector<double> gaps{0.0};
  for (double gap : request.idle_gaps_ms) {
    if (!(gap > 0)) throw std::invalid_argument("profile: idle gaps must be positive");
    gaps.push_back(gap);
  }
  // One pass; its forward's and backward's times where asked for.
  const auto pass = [&](double* forward_ms, double* backward_ms) {
    const double start = clock_ms(request);
    const torch::Tensor output = training.forward();
    const double middle = clock_ms(request);
    training.backward(output);
    const double end = clock_ms(request);
    training.step();
    training.zero_grad();
    if (forward_ms != nullptr) {
      *forward_ms = middle - start;
      *backward_ms = end - middle;
    }
  };
  std::vector<std::vector<double>> forward(gaps.size()), backward(gaps.size());
  for (int r = 0; r < request.repetitions; ++r) {
    for (size_t g = 0; g < gaps.size(); ++g) {
      pass(nullptr, nullptr);
      if (request.before_timed_run) request.before_timed_run();
      if (gaps[g] > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(gaps[g]));
      }
      double f = 0, b = 0;
      pass(&f, &b);
      forward[g].push_back(f);
      backward[g].push_back(b);
    }
  }
  std::vector<AfterIdleTiming> timings;
  for (size_t g = 0; g < gaps.size(); ++g) {
    timings.push_back({gaps[g], stats_of(forward[g]), stats_of(backward[g])});
  }
  return timings;
}

// The layer's backward as a zero-bubble stage splits it (runtime/pipeline/pipeline_executor.cpp:
// find_weight_nodes, input_gradients, weight_gradients) on a fresh forward: I, the input's
// gradient with the weight nodes' incoming gradients captured, then W from them (or, where the
// capture fails, a backward with only the weights wanted). {I, W} in ms.
std::pair<double, double> time_split_backward(ChainLayer& layer, const LayerRun& run,
                                              const PieceTimer& time_ms) {
  const torch::Tensor output = layer.forward(run.input);
  WeightPass pass(output, run.input, layer.parameters);
  const double input_ms = time_ms([&] {
    pass.arm(true);
    torch::autograd::grad({output}, {run.input}, {run.grad_output}, /*retain_graph=*/true,
                          /*create_graph=*/false, /*allow_unused=*/true);
    pass.arm(false);
  });
  const double weight_ms = time_ms([&] {
    if (!pass.run()) {
      torch::autograd::backward({output}, {run.grad_output}, false, false, layer.parameters);
    }
  });
  return {input_ms, weight_ms};
}

// One layer's forward and backward, alone, on its recorded input (samples kept when `timed`),
// and its split backward where the request asks for it.
void time_layer(ChainLayer& layer, LayerRun& run, bool timed, const PieceTimer& time_ms) {
  torch::Tensor layer_output;
  const double lf = time_ms([&] { layer_output = layer.forward(run.input); });
  double lb = 0;
  if (layer_output.requires_grad()) {
    if (!run.grad_output.defined()) run.grad_output = torch::randn_like(layer_output);
    // The parameters' gradients accumulate into their .grad as in training (the range's
    // backward before this left them held); the next repetition's zero_grad() clears them.
    lb = time_ms(
        [&] { layer_backward(layer_output, run.grad_output, run.input, layer.parameters); });
  }
  if (timed) run.forward_ms.push_back(lf), run.backward_ms.push_back(lb);
  if (!time_ms.request.split_backward) return;
  // A layer without weights is all I, one whose input takes no gradient all W: its backward.
  const bool has_weights = has_trainable_weights(layer);
  std::pair<double, double> iw{has_weights ? 0.0 : lb, has_weights ? lb : 0.0};
  if (backward_splits(layer, layer_output, run.input)) {
    iw = time_split_backward(layer, run, time_ms);
  }
  if (timed) run.input_ms.push_back(iw.first), run.weight_ms.push_back(iw.second);
}

LayerTiming layer_timing(const ChainLayer& layer, const LayerRun& run) {
  LayerTiming timing;
  timing.name = layer.name;
  timing.kind = layer.kind;
  timing.forward = stats_of(run.forward_ms);
  timing.backward = stats_of(run.backward_ms);
  if (!run.input_ms.empty()) {
    timing.backward_input = stats_of(run.input_ms);
    timing.backward_weight = stats_of(run.weight_ms);
  }
  timing.activation_bytes = run.activation_bytes;
  timing.stored_bytes = run.stored_bytes;
  timing.weight_pending_bytes = run.weight_pending_bytes;
  timing.backward_working_bytes = run.backward_working_bytes;
  timing.mixtures = run.mixtures;
  for (const auto& p : layer.parameters) timing.parameter_bytes += static_cast<int64_t>(p.nbytes());
  return timing;
}

}  // namespace

LayerProfileResult profile_layers(const LayerProfileRequest& request) {
  if (request.repetitions < 1 || request.warmup < 0 || request.batch < 1) {
    throw std::invalid_argument("profile: repetitions >= 1, warmup >= 0 and batch >= 1");
  }
  torch::set_num_threads(request.threads);
  torch::manual_seed(request.seed);
  const PieceTimer time_ms{request};

  LayerProfileResult result;
  result.batch = request.batch;
  result.repetitions = request.repetitions;
  result.threads = request.threads;

  LoadedChain loaded = load_chain(request, result);
  std::vector<ChainLayer>& chain = loaded.chain;

  const int chain_layers = static_cast<int>(chain.size());
  const int first = request.first_layer;
  const int last = request.last_layer < 0 ? chain_layers - 1 : request.last_layer;
  if (first < 0 || first > last || last >= chain_layers) {
    throw std::invalid_argument("profile: layers " + std::to_string(first) + "-" +
                                std::to_string(last) + " are not within the model's 0-" +
                                std::to_string(chain_layers - 1));
  }
  result.first_layer = first;
  result.chain_layers = chain_layers;

  const std::vector<bool> trainable = trainable_layers(chain);
  const torch::Tensor range_input = range_input_of(loaded, trainable, request.batch, first, result);

  RangeTraining training(chain, first, last, range_input, request.optimizer);
  std::vector<double> whole_forward, whole_backward, whole_step;

  std::vector<LayerRun> runs =
      layer_runs(chain, trainable, range_input, first, last, request.split_backward);

  // Repetitions run round-robin: each one times the range's training step (forward with the
  // loss where the range ends the model, backward, zeroing the gradients and the SGD step),
  // then every layer once in model order. So the layer sum and the whole are measured over the
  // same minutes (a VM's speed can drift by tens of percent within minutes), and a
  // layer runs with the caches a pass over its range leaves it, not with its weights still warm
  // from its own previous repetition.
  const auto repetition = [&](bool timed) {
    // Zeroing the gradients counts as part of the step, as a rank worker's step phase counts
    // it (it writes every gradient: ~5 ms of ResNet-18's 47 MB here).
    const double zero_grad = time_ms([&] { training.zero_grad(); });
    torch::Tensor output;
    const double f = time_ms([&] { output = training.forward(); });
    const double b = time_ms([&] { training.backward(output); });
    const double step = time_ms([&] { training.step(); }) + zero_grad;
    if (timed) whole_forward.push_back(f), whole_backward.push_back(b), whole_step.push_back(step);

    for (LayerRun& run : runs) time_layer(chain[run.index], run, timed, time_ms);
  };
  for (int r = 0; r < request.warmup; ++r) repetition(false);
  if (request.after_warmup) request.after_warmup();
  for (int r = 0; r < request.repetitions; ++r) repetition(true);
  if (!request.idle_gaps_ms.empty()) result.after_idle = time_after_idle(request, training);
  while (request.keep_running && request.keep_running()) {
    repetition(false);
    ++result.untimed_runs;
  }
  result.whole_forward = stats_of(whole_forward);
  result.whole_backward = stats_of(whole_backward);
  result.whole_step = stats_of(whole_step);
  for (const LayerRun& run : runs) result.layers.push_back(layer_timing(chain[run.index], run));
  return result;
}

namespace {

// The TCP store of a co-located or stage profile's processes (`rank` 0 serves it on
// 127.0.0.1:port); its waits give up after `timeout_s`.
c10::intrusive_ptr<c10d::Store> profile_store(const ProfileMeeting& meeting, int rank, int ranks,
                                              double timeout_s) {
  Rendezvous rendezvous;
  rendezvous.port = meeting.port;
  rendezvous.key = meeting.key;
  rendezvous.timeout =
      std::chrono::milliseconds(static_cast<int64_t>(std::max(1.0, timeout_s) * 1000));
  return connect_store(rendezvous, rank, ranks);
}

// Successive barriers of `members` processes, keyed under `prefix`. Round k: everyone counts
// itself in; the last one in opens the round's gate.
std::function<void()> lockstep_rounds(c10::intrusive_ptr<c10d::Store> store, std::string prefix,
                                      int members) {
  auto round = std::make_shared<int64_t>(0);
  return [store, prefix, round, members] {
    const std::string key = prefix + std::to_string((*round)++);
    if (store->add(key, 1) == members) store->set(key + "/open", std::vector<uint8_t>{1});
    store->wait({key + "/open"});
  };
}

}  // namespace

LockstepMeeting make_lockstep_meeting(const ProfileMeeting& meeting, int rank, int ranks,
                                      double timeout_s) {
  auto store = profile_store(meeting, rank, ranks, timeout_s);
  LockstepMeeting lockstep;
  lockstep.barrier = lockstep_rounds(store, "lockstep/", ranks);
  lockstep.gather = [store, rank, ranks](const std::string& result) {
    store->set("gather/" + std::to_string(rank),
               std::vector<uint8_t>(result.begin(), result.end()));
    std::vector<std::string> results;
    for (int r = 0; rank == 0 && r < ranks; ++r) {
      const std::vector<uint8_t> bytes = store->get("gather/" + std::to_string(r));
      results.emplace_back(bytes.begin(), bytes.end());
    }
    return results;
  };
  return lockstep;
}

std::function<void()> make_lockstep_barrier(const ProfileMeeting& meeting, int rank, int ranks,
                                            double timeout_s) {
  return make_lockstep_meeting(meeting, rank, ranks, timeout_s).barrier;
}

StageProfileSync make_stage_profile_sync(const ProfileMeeting& meeting, int process, int stages,
                                         int replicas, double timeout_s) {
  const int processes = stages * replicas;
  auto store = profile_store(meeting, process, processes, timeout_s);
  StageProfileSync sync;
  sync.start = lockstep_rounds(store, "stages/start/", processes);  // called once
  auto finished = std::make_shared<bool>(false);
  sync.keep_running = [store, processes, finished] {
    const int64_t done = store->add("stages/finished", *finished ? 0 : 1);
    *finished = true;
    return done < processes;
  };
  if (replicas > 1) {
    // This stage's replicas only; none once this process has finished its timed runs.
    auto stage_lockstep = lockstep_rounds(
        store, "stages/" + std::to_string(process / replicas) + "/lockstep/", replicas);
    sync.before_timed_run = [stage_lockstep, finished] {
      if (!*finished) stage_lockstep();
    };
  }
  return sync;
}

}  // namespace runtime
