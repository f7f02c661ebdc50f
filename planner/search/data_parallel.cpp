#include "planner/search/data_parallel.h"

#include <cmath>
#include <numeric>

namespace harness::planner {

int max_single_gpu_batch(const ModelProfile& profile, const TrainingSetup& setup,
                         double gpu_memory_bytes) {
  const double peak = setup.peak_activation_per_sample.value_or(profile.activation_bytes.total() /
                                                                setup.profile_batch_size);
  const double free_bytes =
      gpu_memory_bytes - profile.parameter_bytes.total() * setup.optimizer_memory_scaling;
  if (free_bytes <= 0.0 || peak <= 0.0) return free_bytes > 0.0 ? 1 << 30 : 0;
  return static_cast<int>(std::min(std::floor(free_bytes / peak), double{1 << 30}));
}

int gradient_accumulation_batch(int global_batch, int num_gpus, int max_batch) {
  const int per_gpu = global_batch / num_gpus;
  if (max_batch >= per_gpu) return per_gpu;
  // Nothing fits: one sample per step is the best that can be done.
  const int limit = std::max(max_batch, 1);
  int steps = (per_gpu + limit - 1) / limit;
  while (steps < per_gpu / 2 + 1 && per_gpu % steps != 0) ++steps;
  return per_gpu / steps;
}

double exposed_all_reduce_time(const std::vector<double>& layer_compute_s,
                               const std::vector<double>& layer_all_reduce_s, double partial,
                               bool with_compute_slots, bool index_quirk) {
  const int layers = static_cast<int>(layer_compute_s.size());
  if (layers == 0) return 0.0;
  // Block k is layer L-1-k: gradients become ready in backward order, half of a layer's
  // compute being its backward pass.
  std::vector<double> ready(layers), eta(layers), slot(layers, 0.0);
  double clock = 0.0;
  for (int k = 0; k < layers; ++k) {
    const int layer = layers - 1 - k;
    eta[k] = layer_all_reduce_s[layer];
    clock += layer_compute_s[layer] * partial / 2.0;
    ready[k] = clock;
    if (with_compute_slots) {
      slot[k] = layer_compute_s[index_quirk ? k : layer] * partial / 2.0;
    }
  }
  double offset = eta[layers - 1];
  double excess = 0.0;
  for (int i = layers - 2; i >= 0; --i) {
    const double gap = (ready[i + 1] - ready[i]) + slot[i + 1];
    if (gap < eta[i]) {
      const double need = eta[i] - gap;
      if (need < excess) {
        excess -= need;
      } else {
        offset += need - excess;
        excess = 0.0;
      }
    } else {
      excess += gap - eta[i];
    }
  }
  return offset;
}

DataParallelEstimates estimate_data_parallel(const ModelProfile& profile,
                                             const TrainingSetup& setup, const CostModel& cost,
                                             int global_batch) {
  const Devices& devices = cost.devices();
  const int n = devices.num_gpus();
  std::vector<int> all_ids(n);
  std::iota(all_ids.begin(), all_ids.end(), 0);
  const GpuSet all = make_gpu_set(devices, all_ids);
  const double scale = static_cast<double>(global_batch) / setup.profile_batch_size;

  DataParallelEstimates e;
  e.compute_s = profile.compute_s.total() * scale;
  e.all_reduce_s = cost.all_reduce(all, profile.parameter_bytes.total());
  e.max_single_gpu_batch = max_single_gpu_batch(profile, setup, cost.topology().gpu_memory_bytes);
  e.accumulation_batch = gradient_accumulation_batch(global_batch, n, e.max_single_gpu_batch);
  e.no_overlap = e.compute_s / (e.compute_s / n + e.all_reduce_s);
  if (cost.mode() == PlannerMode::kDapple && e.max_single_gpu_batch == 0) {
    // Not even one sample fits next to the parameters: data parallelism cannot run.
    e.no_overlap = 0.0;
    return e;
  }

  std::vector<double> layer_compute, layer_all_reduce;
  if (cost.mode() == PlannerMode::kCompat) {
    // The published planner treats every antichain state as a layer.
    for (int s = 0; s < profile.num_states(); ++s) {
      layer_compute.push_back(profile.compute_s.at(s, s) * scale);
      layer_all_reduce.push_back(cost.all_reduce(all, profile.parameter_bytes.at(s, s)));
    }
  } else {
    // States of a branching model are not a chain (their differences can be negative); the
    // layers themselves, in topological order, are what produces gradients.
    for (int v : topological_order(profile.graph)) {
      const LayerNode& node = profile.graph.nodes[v];
      layer_compute.push_back((node.forward_ms + node.backward_ms) / 1000.0 * scale);
      layer_all_reduce.push_back(cost.all_reduce(all, node.parameter_bytes));
    }
  }
  const double partial = static_cast<double>(e.accumulation_batch) / global_batch;
  const bool quirk = cost.mode() == PlannerMode::kCompat;
  const double p3_offset =
      exposed_all_reduce_time(layer_compute, layer_all_reduce, partial, true, quirk);
  const double overlap_offset =
      exposed_all_reduce_time(layer_compute, layer_all_reduce, partial, false, quirk);
  e.p3 = e.compute_s / (e.compute_s / n + p3_offset);
  e.overlap = e.compute_s / (e.compute_s / n + overlap_offset);
  return e;
}

}  // namespace harness::planner
