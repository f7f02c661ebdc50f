#include "runtime/profile/spmd_operator_times.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "common/process_clock.h"
#include "common/statistics.h"
#include "runtime/models/synthetic_batch.h"
#include "runtime/optim/optimizer.h"
#include "runtime/parallel/peerless_group.h"

namespace runtime {
namespace {

struct StepSeconds {
  double wall = 0, cpu = 0;
};

// The step over every parameter of `model`, each with a gradient, per parameter byte.
StepSeconds step_seconds_per_byte(ZooModel& model, const SpmdTimesRequest& request) {
  double bytes = 0;
  for (auto& parameter : model.parameters()) {
    parameter.mutable_grad() = at::ones_like(parameter);
    bytes += static_cast<double>(parameter.numel() * parameter.element_size());
  }
  auto optimizer = make_optimizer(request.optimizer, model.parameters());
  std::vector<double> seconds, cpu_seconds;
  for (int repetition = -1; repetition < request.repetitions; ++repetition) {
    if (request.before_each) request.before_each();
    const auto started = std::chrono::steady_clock::now();
    const double cpu_started_ms = harness::process_cpu_ms();
    optimizer->step();
    if (repetition < 0) continue;  // the first allocates the optimizer's state
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    cpu_seconds.push_back((harness::process_cpu_ms() - cpu_started_ms) / 1e3);
  }
  return {harness::percentile(seconds, 50) / bytes, harness::percentile(cpu_seconds, 50) / bytes};
}

// {the slowest copy's wall time, or the copies' CPU time over the cores they share if longer;
// the most CPU time one copy took}.
std::pair<double, double> slowest(const std::vector<double>& walls, const std::vector<double>& cpus,
                                  int cores) {
  double cpu_sum = 0;
  for (double cpu : cpus) cpu_sum += cpu;
  return {std::max(*std::max_element(walls.begin(), walls.end()), cpu_sum / cores),
          *std::max_element(cpus.begin(), cpus.end())};
}

void check_same_shape(const SpmdTimes& copy, const SpmdTimes& first) {
  bool same = copy.plans.size() == first.plans.size();
  for (size_t p = 0; same && p < copy.plans.size(); ++p) {
    same = copy.plans[p].size() == first.plans[p].size();
  }
  if (!same) throw std::invalid_argument("slowest_of: the copies timed different plans");
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
  const StepSeconds step = step_seconds_per_byte(*model, request);
  times.step_seconds_per_parameter_byte = step.wall;
  times.step_cpu_seconds_per_parameter_byte = step.cpu;
  return times;
}

SpmdTimes slowest_of(const std::vector<SpmdTimes>& copies, int cores) {
  if (copies.empty()) throw std::invalid_argument("slowest_of: no copies");
  if (cores < 1) throw std::invalid_argument("slowest_of: no cores");
  const auto each = [&](auto time_of) {
    std::vector<double> walls, cpus;
    for (const SpmdTimes& copy : copies) {
      const auto [wall, cpu] = time_of(copy);
      walls.push_back(wall);
      cpus.push_back(cpu);
    }
    return slowest(walls, cpus, cores);
  };
  SpmdTimes combined = copies.front();
  for (const SpmdTimes& copy : copies) check_same_shape(copy, combined);
  std::tie(combined.step_seconds_per_parameter_byte, combined.step_cpu_seconds_per_parameter_byte) =
      each([](const SpmdTimes& c) {
        return std::pair{c.step_seconds_per_parameter_byte, c.step_cpu_seconds_per_parameter_byte};
      });
  for (size_t p = 0; p < combined.plans.size(); ++p) {
    for (size_t i = 0; i < combined.plans[p].size(); ++i) {
      auto& op = combined.plans[p][i];
      std::tie(op.forward, op.forward_cpu) = each([&](const SpmdTimes& c) {
        return std::pair{c.plans[p][i].forward, c.plans[p][i].forward_cpu};
      });
      std::tie(op.backward, op.backward_cpu) = each([&](const SpmdTimes& c) {
        return std::pair{c.plans[p][i].backward, c.plans[p][i].backward_cpu};
      });
    }
  }
  return combined;
}

}  // namespace runtime
