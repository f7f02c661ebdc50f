#include "rank/typical_iteration.h"

#include <torch/torch.h>

#include <vector>

namespace runtime {

namespace {

// Each measured iteration's time on the slowest rank: every rank's times gathered.
std::vector<double> slowest_rank_times(Communicator& world, const SampleLog& log,
                                       c10::Device device) {
  const auto n = static_cast<int64_t>(log.samples().size());
  const auto options = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  std::vector<double> times;
  for (const auto& sample : log.samples()) times.push_back(sample.iteration_ms);
  const at::Tensor mine = torch::tensor(times, torch::kFloat64).to(device);
  at::Tensor all = torch::empty({world.world_size() * n}, options);
  world.all_gather(all, mine)->wait();
  const at::Tensor slowest = std::get<0>(all.view({world.world_size(), n}).max(0)).cpu();
  return {slowest.data_ptr<double>(), slowest.data_ptr<double>() + n};
}

}  // namespace

std::optional<TracedIteration> keep_typical_iteration(Communicator& world,
                                                      const WorkerConfig& config,
                                                      const SampleLog& log, TraceRecorder& trace,
                                                      c10::Device device) {
  if (config.trace_iteration < 0) return std::nullopt;
  const TracedIteration chosen =
      nearest_to_median(slowest_rank_times(world, log, device),
                        config.trace_iteration - config.warmup, config.trace_iterations);
  trace.keep_iteration(chosen.iteration);
  return chosen;
}

}  // namespace runtime
