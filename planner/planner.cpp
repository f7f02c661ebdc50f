#include "planner/planner.h"

#include <map>
#include <stdexcept>
#include <tuple>

#include "planner/pipeline_search.h"
#include "planner/thread_pool.h"

namespace harness::planner {
namespace {

// One run of the search program. In dapple mode its memory check depends on the micro-batch
// count only through min(M, units), so batch sizes share searches.
struct SearchKey {
  int units;
  bool straight;
  int in_flight_cap;  // 0: no memory check (compat)
  auto operator<=>(const SearchKey&) const = default;
};

struct EvaluatedCandidate {
  std::optional<PipelineCandidate> plan;
  PlanShape shape;
};

std::vector<int> straight_unit_counts(int n) {
  // The published planner adds 1:1 and all-straight pipelines for even n > 2, else only n.
  if (n < 2) return {};
  if (n > 2 && n % 2 == 0) return {2, n};
  return {n};
}

}  // namespace

CostModel make_cost_model(const PlannerOptions& options) {
  Topology topology = options.mode == PlannerMode::kCompat && !options.compat_uses_topology
                          ? Topology::published_constants()
                          : options.topology;
  return CostModel(options.devices, topology, options.mode);
}

SweepResult plan_sweep(const ModelProfile& profile, const PlannerOptions& options,
                       const std::vector<int>& global_batches) {
  if (options.setup.profile_batch_size <= 0) {
    throw std::invalid_argument("profile batch size must be positive");
  }
  const CostModel cost = make_cost_model(options);
  const bool dapple = options.mode == PlannerMode::kDapple;
  const int n = options.devices.num_gpus();
  const int micro = options.setup.effective_micro_batch();
  const double gpu_memory = cost.topology().gpu_memory_bytes;
  ThreadPool pool(options.threads);

  // Which searches each batch size needs, in the order candidates are compared.
  std::vector<std::vector<SearchKey>> keys_per_batch(global_batches.size());
  std::map<SearchKey, int> key_index;
  std::vector<SearchKey> keys;
  auto need = [&](std::size_t b, int units, bool straight) {
    const int rp = n / units;
    int cap = 0;
    if (dapple) {
      const int m = global_batches[b] / rp / micro;
      if (m == 0) return;  // no micro-batch per pipeline: nothing to search
      cap = std::min(m, units);
    }
    const SearchKey key{units, straight, cap};
    if (key_index.emplace(key, static_cast<int>(keys.size())).second) keys.push_back(key);
    keys_per_batch[b].push_back(key);
  };
  for (std::size_t b = 0; b < global_batches.size(); ++b) {
    for (int units = 2; units <= n; ++units) {
      // compat: the published search finds no plan when the units do not divide the GPUs.
      if (!dapple && n % units != 0) continue;
      need(b, units, false);
    }
    for (int units : straight_unit_counts(n)) need(b, units, true);
  }

  std::vector<EvaluatedCandidate> searched(keys.size());
  pool.parallel_for(static_cast<int>(keys.size()), [&](int i) {
    const SearchKey& key = keys[i];
    SearchRequest request;
    request.units = key.units;
    request.gpus_per_unit = n / key.units;
    request.straight = key.straight;
    request.policies = options.policies;
    if (dapple) {
      request.memory = StageMemoryLimit{
          gpu_memory, options.setup.optimizer_memory_scaling,
          static_cast<double>(micro) / options.setup.profile_batch_size, key.in_flight_cap};
    }
    searched[i].plan = search_pipeline(profile, cost, request);
    if (searched[i].plan) searched[i].shape = shape_of(profile, cost, *searched[i].plan);
  });

  std::vector<PipelineCandidate> halves;
  if (n >= 2) halves = bipartition_candidates(profile, cost, options.policies, dapple ? 2.0 : 1.0);
  std::vector<PlanShape> half_shapes(halves.size());
  constexpr int kChunk = 256;
  pool.parallel_for(static_cast<int>((halves.size() + kChunk - 1) / kChunk), [&](int chunk) {
    const std::size_t end = std::min(halves.size(), static_cast<std::size_t>(chunk + 1) * kChunk);
    for (std::size_t c = static_cast<std::size_t>(chunk) * kChunk; c < end; ++c) {
      half_shapes[c] = shape_of(profile, cost, halves[c]);
    }
  });

  SweepResult result;
  result.batches.resize(global_batches.size());
  const double total_compute = profile.compute_s.total();
  pool.parallel_for(static_cast<int>(global_batches.size()), [&](int b) {
    BatchPlan& out = result.batches[b];
    out.global_batch = global_batches[b];
    out.data_parallel = estimate_data_parallel(profile, options.setup, cost, out.global_batch);
    const PipelineCandidate* best = nullptr;
    auto consider = [&](const PipelineCandidate& plan, const PlanShape& shape) {
      ++out.candidates_considered;
      PipelineTiming timing =
          time_pipeline(shape, total_compute, out.global_batch, options.setup, gpu_memory);
      if (dapple && !timing.fits_memory) {
        ++out.candidates_over_memory;
        return;
      }
      if (dapple && timing.micro_batches == 0) return;
      // Strictly better only: ties keep the earlier candidate, so results are deterministic.
      if (best == nullptr || timing.speedup > out.best_hybrid) {
        best = &plan;
        out.best_hybrid = timing.speedup;
        out.timing = std::move(timing);
      }
    };
    for (const SearchKey& key : keys_per_batch[b]) {
      const EvaluatedCandidate& c = searched[key_index.at(key)];
      if (c.plan) consider(*c.plan, c.shape);
    }
    for (std::size_t h = 0; h < halves.size(); ++h) consider(halves[h], half_shapes[h]);
    if (best != nullptr) out.plan = *best;
  });
  return result;
}

}  // namespace harness::planner
