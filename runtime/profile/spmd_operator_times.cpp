#include "runtime/profile/spmd_operator_times.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "common/statistics.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/optim/optimizer.h"
#include "runtime/parallel/peerless_group.h"

namespace runtime {
namespace {

// The step over every parameter of `model`, each with a gradient, per parameter byte.
double step_seconds_per_byte(ZooModel& model, const SpmdTimesRequest& request) {
  double bytes = 0;
  for (auto& parameter : model.parameters()) {
    parameter.mutable_grad() = at::ones_like(parameter);
    bytes += static_cast<double>(parameter.numel() * parameter.element_size());
  }
  auto optimizer = make_optimizer(request.optimizer, model.parameters());
  std::vector<double> seconds;
  for (int repetition = -1; repetition < request.repetitions; ++repetition) {
    if (request.before_each) request.before_each();
    const auto started = std::chrono::steady_clock::now();
    optimizer->step();
    if (repetition < 0) continue;  // the first allocates the optimizer's state
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  return harness::percentile(seconds, 50) / bytes;
}

}  // namespace

SpmdTimes time_spmd_operators(const SpmdTimesRequest& request,
                              const std::vector<std::vector<SpmdStep>>& plans) {
  at::set_num_threads(request.threads);
  torch::manual_seed(request.seed);
  const auto model = make_model(request.model, request.options);
  const SyntheticBatch batch =
      make_synthetic_batch(*model, request.options, request.batch, request.loss);
  PeerlessGroup group(0, request.ranks);
  SpmdTimes times;
  for (const std::vector<SpmdStep>& steps : plans) {
    SpmdTransformer rank(*model, steps, group, request.loss);
    times.plans.push_back(
        rank.time_operators(batch.input, batch.target, request.repetitions, request.before_each));
  }
  times.step_seconds_per_parameter_byte = step_seconds_per_byte(*model, request);
  return times;
}

SpmdTimes slowest_of(const std::vector<SpmdTimes>& copies) {
  if (copies.empty()) throw std::invalid_argument("slowest_of: no copies");
  SpmdTimes slowest = copies.front();
  for (const SpmdTimes& copy : copies) {
    if (copy.plans.size() != slowest.plans.size())
      throw std::invalid_argument("slowest_of: copies timed different plans");
    slowest.step_seconds_per_parameter_byte =
        std::max(slowest.step_seconds_per_parameter_byte, copy.step_seconds_per_parameter_byte);
    for (size_t p = 0; p < copy.plans.size(); ++p) {
      if (copy.plans[p].size() != slowest.plans[p].size())
        throw std::invalid_argument("slowest_of: copies timed different operators");
      for (size_t i = 0; i < copy.plans[p].size(); ++i) {
        auto& op = slowest.plans[p][i];
        op.forward = std::max(op.forward, copy.plans[p][i].forward);
        op.backward = std::max(op.backward, copy.plans[p][i].backward);
      }
    }
  }
  return slowest;
}

}  // namespace runtime
