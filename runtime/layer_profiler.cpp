#include "runtime/layer_profiler.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>

#include "runtime/communicator.h"
#include "runtime/model_zoo.h"

namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

double since_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

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
};

std::vector<ChainLayer> zoo_chain(const std::shared_ptr<ZooModel>& model) {
  std::vector<ChainLayer> chain;
  for (const auto& layer : model->layers()) {
    torch::nn::AnyModule module = layer.module;
    chain.push_back({layer.name, layer.kind,
                     [module](const torch::Tensor& x) mutable { return module.forward(x); },
                     module.ptr()->parameters()});
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
        {child.name, kind,
         [submodule](const torch::Tensor& x) mutable { return submodule.forward({x}).toTensor(); },
         parameters});
  }
  if (chain.empty()) throw std::invalid_argument("the TorchScript module has no children");
  return chain;
}

int64_t bytes_of(const torch::Tensor& t) {
  return t.numel() * static_cast<int64_t>(t.element_size());
}

}  // namespace

LayerProfileResult profile_layers(const LayerProfileRequest& request) {
  if (request.repetitions < 1 || request.warmup < 0 || request.batch < 1) {
    throw std::invalid_argument("profile: repetitions >= 1, warmup >= 0 and batch >= 1");
  }
  torch::set_num_threads(request.threads);
  torch::manual_seed(request.seed);
  const auto sync = [&request] {
    if (request.before_timed_run) request.before_timed_run();
  };

  LayerProfileResult result;
  result.batch = request.batch;
  result.repetitions = request.repetitions;
  result.threads = request.threads;

  std::shared_ptr<ZooModel> zoo;
  torch::jit::script::Module script;
  std::vector<ChainLayer> chain;
  if (!request.torchscript.empty()) {
    script = torch::jit::load(request.torchscript);
    script.train();
    chain = script_chain(script);
    result.model = request.torchscript;
    if (request.input_shape.empty()) {
      throw std::invalid_argument("profile: a TorchScript module needs --input-shape");
    }
    result.input_shape = request.input_shape;
  } else {
    const auto& catalog = model_catalog();
    auto entry = std::find_if(catalog.begin(), catalog.end(),
                              [&](const ModelEntry& e) { return e.name == request.model; });
    if (entry == catalog.end())
      throw std::invalid_argument("unknown model '" + request.model + "'");
    result.model = request.model;
    result.input_shape =
        request.input_shape.empty() ? entry->default_input_shape : request.input_shape;
    ModelOptions options{result.input_shape, request.num_classes};
    options.depth = request.depth;
    options.width = request.width;
    zoo = make_model(request.model, options);
    zoo->train();
    chain = zoo_chain(zoo);
  }

  std::vector<int64_t> shape{request.batch};
  shape.insert(shape.end(), result.input_shape.begin(), result.input_shape.end());
  // Token ids for models that read tokens (bert), features otherwise.
  const torch::Tensor input = zoo && zoo->input_vocabulary() > 0
                                  ? torch::randint(zoo->input_vocabulary(), shape, torch::kLong)
                                  : torch::randn(shape);
  result.input_bytes = bytes_of(input);

  // The whole model, as a training step times it: forward with the loss, then backward.
  {
    auto run_chain = [&](torch::Tensor x) {
      for (auto& layer : chain) x = layer.forward(x);
      return x;
    };
    torch::Tensor target;
    {
      torch::NoGradGuard no_grad;
      target = torch::randn_like(run_chain(input));
    }
    std::vector<torch::Tensor> parameters;
    for (const auto& layer : chain) {
      parameters.insert(parameters.end(), layer.parameters.begin(), layer.parameters.end());
    }
    torch::optim::SGD optimizer(parameters, torch::optim::SGDOptions(0.01));
    std::vector<double> forward_ms, backward_ms, step_ms;
    for (int r = 0; r < request.warmup + request.repetitions; ++r) {
      optimizer.zero_grad();
      sync();
      const auto t0 = Clock::now();
      torch::Tensor loss = torch::mse_loss(run_chain(input), target);
      const double f = since_ms(t0);
      sync();
      const auto t1 = Clock::now();
      loss.backward();
      const double b = since_ms(t1);
      sync();
      const auto t2 = Clock::now();
      optimizer.step();
      const double s = since_ms(t2);
      if (r >= request.warmup) {
        forward_ms.push_back(f), backward_ms.push_back(b), step_ms.push_back(s);
      }
    }
    result.whole_forward = stats_of(forward_ms);
    result.whole_backward = stats_of(backward_ms);
    result.whole_step = stats_of(step_ms);
  }

  // Layer by layer, each on the previous layer's real output. The first layer's input needs
  // no gradient, as in training; every later one does, so its backward includes the input
  // gradient it would compute inside the model.
  torch::Tensor activation = input;
  for (size_t i = 0; i < chain.size(); ++i) {
    ChainLayer& layer = chain[i];
    torch::Tensor x = activation.detach();
    if (i > 0) x.requires_grad_(true);
    torch::Tensor grad_output;
    std::vector<double> forward_ms, backward_ms;
    torch::Tensor output;
    for (int r = 0; r < request.warmup + request.repetitions; ++r) {
      sync();
      const auto t0 = Clock::now();
      output = layer.forward(x);
      const double f = since_ms(t0);
      double b = 0;
      if (output.requires_grad()) {
        if (!grad_output.defined()) grad_output = torch::randn_like(output);
        // Gradients of the input and the parameters, as the layer computes them inside the
        // model, without accumulating into the detached input's .grad (the model never does).
        std::vector<torch::Tensor> wrt;
        if (x.requires_grad()) wrt.push_back(x);
        for (const auto& p : layer.parameters) {
          if (p.requires_grad()) wrt.push_back(p);
        }
        sync();
        const auto t1 = Clock::now();
        if (!wrt.empty()) torch::autograd::grad({output}, wrt, {grad_output});
        b = since_ms(t1);
      }
      if (r >= request.warmup) forward_ms.push_back(f), backward_ms.push_back(b);
    }
    LayerTiming timing;
    timing.name = layer.name;
    timing.kind = layer.kind;
    timing.forward = stats_of(forward_ms);
    timing.backward = stats_of(backward_ms);
    timing.activation_bytes = bytes_of(output);
    for (const auto& p : layer.parameters) timing.parameter_bytes += bytes_of(p);
    result.layers.push_back(timing);
    activation = output.detach();
  }
  return result;
}

std::function<void()> make_lockstep_barrier(int port, int rank, int ranks, double timeout_s) {
  Rendezvous rendezvous;
  rendezvous.port = port;
  rendezvous.timeout =
      std::chrono::milliseconds(static_cast<int64_t>(std::max(1.0, timeout_s) * 1000));
  auto store = connect_store(rendezvous, rank, ranks);
  auto round = std::make_shared<int64_t>(0);
  // Round k: everyone counts itself in; the last one in opens the round's gate.
  return [store, round, ranks] {
    const std::string key = "lockstep/" + std::to_string((*round)++);
    if (store->add(key, 1) == ranks) store->set(key + "/open", std::vector<uint8_t>{1});
    store->wait({key + "/open"});
  };
}

}  // namespace runtime
