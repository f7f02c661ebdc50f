// The optimizers every system steps with, against the update rules computed here by hand in
// double: AdamW (decoupled weight decay, bias-corrected moments) and SGD with momentum and
// weight decay; and the state each keeps, which the memory table counts.
#include "runtime/optim/optimizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

namespace {

using runtime::WorkerOptimizer;

// Steps `config`'s optimizer `steps` times on a parameter starting at `start`, its gradient
// `gradient` each time; returns the parameter.
std::vector<double> stepped(const WorkerOptimizer& config, const std::vector<double>& start,
                            const std::vector<double>& gradient, int steps) {
  torch::Tensor parameter = torch::tensor(start, torch::kFloat).requires_grad_(true);
  const auto optimizer = runtime::make_optimizer(config, {parameter});
  for (int t = 0; t < steps; ++t) {
    optimizer->zero_grad();
    parameter.mutable_grad() = torch::tensor(gradient, torch::kFloat);
    optimizer->step();
  }
  const torch::Tensor result = parameter.detach().to(torch::kDouble);
  return {result.data_ptr<double>(), result.data_ptr<double>() + result.numel()};
}

TEST(Optimizer, AdamWStepsAsItsUpdateRuleSays) {
  const WorkerOptimizer config{"adamw", 0.1, 0.0, 0.9, 0.999, 1e-8, 0.01};
  const std::vector<double> start{1.0, -2.0}, gradient{0.5, 0.25};
  std::vector<double> p = start, m(2, 0.0), v(2, 0.0);
  for (int t = 1; t <= 3; ++t) {
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1 - config.lr * config.weight_decay;  // decoupled: on the weight, not the gradient
      m[i] = config.beta1 * m[i] + (1 - config.beta1) * gradient[i];
      v[i] = config.beta2 * v[i] + (1 - config.beta2) * gradient[i] * gradient[i];
      const double m_hat = m[i] / (1 - std::pow(config.beta1, t));
      const double v_hat = v[i] / (1 - std::pow(config.beta2, t));
      p[i] -= config.lr * m_hat / (std::sqrt(v_hat) + config.eps);
    }
  }
  const std::vector<double> got = stepped(config, start, gradient, 3);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(got[i], p[i], 1e-6) << i;
  // The first step moves each weight by about lr whatever its gradient's size: Adam's mark.
  EXPECT_NEAR(stepped(config, start, gradient, 1)[1], -2.0 * (1 - 0.001) - 0.1, 1e-6);
}

TEST(Optimizer, SgdWithMomentumAndWeightDecay) {
  const WorkerOptimizer config{"sgd", 0.1, 0.9, 0.9, 0.999, 1e-8, 0.05};
  const std::vector<double> start{1.0, -2.0}, gradient{0.5, 0.25};
  std::vector<double> p = start, buffer(2, 0.0);
  for (int t = 0; t < 3; ++t) {
    for (size_t i = 0; i < p.size(); ++i) {
      const double g = gradient[i] + config.weight_decay * p[i];
      buffer[i] = t == 0 ? g : config.momentum * buffer[i] + g;
      p[i] -= config.lr * buffer[i];
    }
  }
  const std::vector<double> got = stepped(config, start, gradient, 3);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(got[i], p[i], 1e-6) << i;
}

// AdamW keeps two fp32 moments per parameter (8 bytes each); SGD one buffer with momentum and
// none without.
TEST(Optimizer, StateIsWhatTheUpdateKeeps) {
  auto state_bytes = [](const WorkerOptimizer& config) {
    torch::Tensor a = torch::ones({3, 4}, torch::requires_grad());
    torch::Tensor b = torch::ones({5}, torch::requires_grad());
    const auto optimizer = runtime::make_optimizer(config, {a, b});
    EXPECT_TRUE(runtime::optimizer_state_tensors(*optimizer).empty());  // made at the first step
    (a.sum() + b.sum()).backward();
    optimizer->step();
    long long bytes = 0;
    for (const auto& t : runtime::optimizer_state_tensors(*optimizer)) {
      if (t.defined()) bytes += t.numel() * static_cast<long long>(t.element_size());
    }
    return bytes;
  };
  const WorkerOptimizer adamw{"adamw", 0.1, 0.0, 0.9, 0.999, 1e-8, 0.01};
  const WorkerOptimizer momentum{"sgd", 0.1, 0.9};
  const WorkerOptimizer plain{"sgd", 0.1, 0.0};
  EXPECT_EQ(state_bytes(adamw), 2 * 17 * 4);
  EXPECT_EQ(state_bytes(momentum), 17 * 4);
  EXPECT_EQ(state_bytes(plain), 0);
  // What the memory formulas count per element is what each one kept.
  for (const auto& config : {adamw, momentum, plain}) {
    EXPECT_EQ(state_bytes(config), runtime::optimizer_states_per_element(config) * 17 * 4)
        << config.name << " momentum " << config.momentum;
  }
}

TEST(Optimizer, AnUnknownNameIsRefused) {
  torch::Tensor a = torch::ones({2}, torch::requires_grad());
  EXPECT_THROW(runtime::make_optimizer({"lamb", 0.1}, {a}), std::invalid_argument);
}

}  // namespace
