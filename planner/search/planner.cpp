#include "planner/search/planner.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "planner/search/pipeline_search.h"
#include "planner/search/thread_pool.h"

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

// A two-stage candidate by position: split state, first-stage GPU count, placement pair.
struct BipartitionIndex {
  int split;
  int first_gpus;
  int pair;
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

// Per batch size: the best candidate so far, in the published order (searches, then the
// two-stage plans); strictly better only, so ties keep the earlier candidate.
struct Best {
  const PipelineCandidate* searched = nullptr;
  std::optional<BipartitionIndex> half;
  double speedup = 0.0;
  bool found = false;
  int considered = 0, over_memory = 0;
};

// Times a candidate at a global batch and keeps it in `best` when it fits (dapple mode checks
// memory and needs a micro-batch) and is strictly faster; returns whether it was kept.
struct CandidateJudge {
  double total_compute;
  const TrainingSetup& setup;
  double gpu_memory;
  bool dapple;

  bool operator()(Best& best, const PlanShape& shape, int global_batch) const {
    ++best.considered;
    const PipelineTiming timing =
        time_pipeline(shape, total_compute, global_batch, setup, gpu_memory);
    if (dapple && !timing.fits_memory) {
      ++best.over_memory;
      return false;
    }
    if (dapple && timing.micro_batches == 0) return false;
    if (best.found && !(timing.speedup > best.speedup)) return false;
    best.found = true;
    best.speedup = timing.speedup;
    return true;
  }
};

// What a scan of the two-stage candidates (every split state, first-stage GPU count and
// placement pair) needs.
struct TwoStageScan {
  const ModelProfile& profile;
  const CostModel& cost;
  const std::vector<std::vector<GpuPair>>& pairs;
  int splits;
  int n;
  double activation_factor;
  const std::vector<int>& global_batches;
  const CandidateJudge& consider;
};

void scan_two_stage_exhaustive(const TwoStageScan& scan, std::vector<Best>& bests) {
  const auto& [profile, cost, pairs, splits, n, activation_factor, global_batches, consider] = scan;
  // Straightforward: all two-stage candidates materialised, then each batch size scans them.
  std::vector<PipelineCandidate> halves;
  std::vector<BipartitionIndex> where;
  for (int l = 0; l < splits; ++l) {
    for (int g = 1; g < n; ++g) {
      for (int p = 0; p < static_cast<int>(pairs[g].size()); ++p) {
        halves.push_back(bipartition_candidate(profile, cost, l, pairs[g][p], activation_factor));
        where.push_back({l, g, p});
      }
    }
  }
  for (std::size_t b = 0; b < global_batches.size(); ++b) {
    for (std::size_t h = 0; h < halves.size(); ++h) {
      if (consider(bests[b], shape_of(profile, cost, halves[h]), global_batches[b])) {
        bests[b].searched = nullptr;
        bests[b].half = where[h];
      }
    }
  }
}

void scan_two_stage_streamed(const TwoStageScan& scan, ThreadPool& pool, std::vector<Best>& bests) {
  const auto& [profile, cost, pairs, splits, n, activation_factor, global_batches, consider] = scan;
  // Streamed: each chunk of split states keeps its own best per batch size, and the chunks
  // merge in order -- the first strictly best candidate, as a sequential scan would find.
  const int chunk_size = std::max(1, splits / (4 * pool.threads()));
  const int chunks = (splits + chunk_size - 1) / chunk_size;
  std::vector<std::vector<Best>> chunk_bests(chunks, std::vector<Best>(global_batches.size()));
  pool.parallel_for(chunks, [&](int c) {
    PlanShape shape;
    std::vector<StageView> views(2);
    for (int l = c * chunk_size; l < std::min(splits, (c + 1) * chunk_size); ++l) {
      for (int g = 1; g < n; ++g) {
        for (int p = 0; p < static_cast<int>(pairs[g].size()); ++p) {
          const GpuPair& pair = pairs[g][p];
          views[0] = {0, l, pair.first.size(), &pair.first};
          views[1] = {l + 1, profile.num_states() - 1, pair.second.size(), &pair.second};
          fill_shape(profile, cost, 1,
                     bipartition_bottleneck(profile, cost, l, pair, activation_factor), views,
                     shape);
          for (std::size_t b = 0; b < global_batches.size(); ++b) {
            if (consider(chunk_bests[c][b], shape, global_batches[b])) {
              chunk_bests[c][b].half = BipartitionIndex{l, g, p};
            }
          }
        }
      }
    }
  });
  for (std::size_t b = 0; b < global_batches.size(); ++b) {
    Best& best = bests[b];
    for (const std::vector<Best>& chunk : chunk_bests) {
      const Best& local = chunk[b];
      best.considered += local.considered;
      best.over_memory += local.over_memory;
      if (local.found && (!best.found || local.speedup > best.speedup)) {
        best.found = true;
        best.speedup = local.speedup;
        best.searched = nullptr;
        best.half = local.half;
      }
    }
  }
}

// Which searches each batch size needs, in the order candidates are compared, and the
// distinct searches (batch sizes that need the same one share it).
struct SearchPlan {
  std::vector<std::vector<SearchKey>> keys_per_batch;
  std::map<SearchKey, int> key_index;
  std::vector<SearchKey> keys;
};

SearchPlan plan_searches(const std::vector<int>& global_batches, int n, int micro, bool dapple) {
  SearchPlan plan;
  auto& [keys_per_batch, key_index, keys] = plan;
  keys_per_batch.resize(global_batches.size());
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
    // compat: units that do not divide the GPUs get the published search's single-stage plan
    // (search_key sets SearchRequest::single_stage).
    for (int units = 2; units <= n; ++units) need(b, units, false);
    for (int units : straight_unit_counts(n)) need(b, units, true);
  }

  return plan;
}

// Every search the sweep's batch sizes need, one result per key of `plan`.
std::vector<EvaluatedCandidate> run_searches(const SearchPlan& plan, const ModelProfile& profile,
                                             const CostModel& cost, const PlannerOptions& options,
                                             ThreadPool& pool) {
  const auto& keys = plan.keys;
  const bool dapple = options.mode == PlannerMode::kDapple;
  const int n = options.devices.num_gpus();
  const int micro = options.setup.effective_micro_batch();
  const double gpu_memory = cost.topology().gpu_memory_bytes;
  // Searches of one unit count and kind differ only in their in-flight cap: run the largest
  // cap first; its plan holds for every cap down to the one where a stage it turned down for
  // memory would fit (search_pipeline's same_above_cap), and only there is another search run.
  std::map<std::pair<int, bool>, std::vector<int>> groups;  // (units, straight) -> key indexes
  for (int i = 0; i < static_cast<int>(keys.size()); ++i) {
    groups[{keys[i].units, keys[i].straight}].push_back(i);
  }
  std::vector<std::vector<int>> chains;
  for (auto& [group, members] : groups) {
    std::sort(members.begin(), members.end(),
              [&](int a, int b) { return keys[a].in_flight_cap > keys[b].in_flight_cap; });
    chains.push_back(members);
  }
  // Two passes: the largest cap of every chain side by side, then every key its chain's first
  // search does not answer, each searched on its own, all side by side (a chain rarely needs
  // more than one; where memory binds at every cap, this keeps the work spread over threads).
  std::vector<EvaluatedCandidate> searched(keys.size());
  const auto search_key = [&](int k, int* same_above_cap) {
    const SearchKey& key = keys[k];
    SearchRequest request;
    request.units = key.units;
    request.gpus_per_unit = n / key.units;
    request.straight = key.straight;
    request.single_stage = !dapple && n % key.units != 0;
    request.policies = options.policies;
    request.exhaustive = options.exhaustive_search;
    if (dapple) {
      request.memory = StageMemoryLimit{
          gpu_memory, options.setup.optimizer_memory_scaling,
          static_cast<double>(micro) / options.setup.profile_batch_size, key.in_flight_cap};
    }
    EvaluatedCandidate found;
    found.plan = search_pipeline(profile, cost, request, same_above_cap);
    if (found.plan) found.shape = shape_of(profile, cost, *found.plan);
    return found;
  };
  std::vector<std::vector<int>> unanswered(chains.size());
  pool.parallel_for(static_cast<int>(chains.size()), [&](int c) {
    const std::vector<int>& chain = chains[c];
    int same_above_cap = 0;
    const EvaluatedCandidate found = search_key(chain.front(), &same_above_cap);
    for (int k : chain) {
      // Sharing is off for the straightforward program, which tests compare key by key.
      const bool answered = k == chain.front() ||
                            (!options.exhaustive_search && keys[k].in_flight_cap > same_above_cap);
      if (answered) {
        searched[k] = found;
      } else {
        unanswered[c].push_back(k);
      }
    }
  });
  std::vector<int> rest;
  for (const auto& keys_left : unanswered)
    rest.insert(rest.end(), keys_left.begin(), keys_left.end());
  pool.parallel_for(static_cast<int>(rest.size()),
                    [&](int i) { searched[rest[i]] = search_key(rest[i], nullptr); });

  return searched;
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

  const SearchPlan plan = plan_searches(global_batches, n, micro, dapple);
  const auto& [keys_per_batch, key_index, keys] = plan;

  const std::vector<EvaluatedCandidate> searched = run_searches(plan, profile, cost, options, pool);

  SweepResult result;
  result.batches.resize(global_batches.size());
  const double total_compute = profile.compute_s.total();
  std::vector<Best> bests(global_batches.size());
  const CandidateJudge consider{total_compute, options.setup, gpu_memory, dapple};
  pool.parallel_for(static_cast<int>(global_batches.size()), [&](int b) {
    BatchPlan& out = result.batches[b];
    out.global_batch = global_batches[b];
    out.data_parallel = estimate_data_parallel(profile, options.setup, cost, out.global_batch);
    for (const SearchKey& key : keys_per_batch[b]) {
      const EvaluatedCandidate& c = searched[key_index.at(key)];
      if (c.plan && consider(bests[b], c.shape, out.global_batch)) bests[b].searched = &*c.plan;
    }
  });

  const double activation_factor = dapple ? 2.0 : 1.0;
  std::vector<std::vector<GpuPair>> pairs;
  if (n >= 2) pairs = bipartition_gpu_pairs(options.devices, options.policies);
  const int splits = n >= 2 ? profile.num_states() - 1 : 0;
  const TwoStageScan scan{profile,           cost,           pairs,   splits, n,
                          activation_factor, global_batches, consider};
  if (options.exhaustive_search) {
    scan_two_stage_exhaustive(scan, bests);
  } else {
    scan_two_stage_streamed(scan, pool, bests);
  }

  pool.parallel_for(static_cast<int>(global_batches.size()), [&](int b) {
    BatchPlan& out = result.batches[b];
    const Best& best = bests[b];
    out.candidates_considered = best.considered;
    out.candidates_over_memory = best.over_memory;
    if (!best.found) return;
    if (best.searched != nullptr) {
      out.plan = *best.searched;
    } else {
      const BipartitionIndex& h = *best.half;
      out.plan = bipartition_candidate(profile, cost, h.split, pairs[h.first_gpus][h.pair],
                                       activation_factor);
    }
    out.best_hybrid = best.speedup;
    out.timing = time_pipeline(shape_of(profile, cost, *out.plan), total_compute, out.global_batch,
                               options.setup, gpu_memory);
  });
  return result;
}

}  // namespace harness::planner
