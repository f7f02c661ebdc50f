#include "planner/search/pipeline_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace harness::planner {
namespace {

// stage_memory_bytes from the stage's totals (one expression, so that both agree to the bit).
double memory_bytes(double parameters, double activations, int units, int in_flight,
                    double optimizer_memory_scaling, double micro_batch_over_profile_batch) {
  return parameters * optimizer_memory_scaling +
         in_flight * activations * micro_batch_over_profile_batch / units;
}

// One entry of the program: the best way found to run states 0..j on m+1 units such that the
// GPUs end in a given occupancy (or the best over all occupancies).
struct Cell {
  double value = 0.0;       // bottleneck so far, seconds per profile batch
  int previous_state = -1;  // last state of the previous stage; -1 for a first stage
  int previous_row = -1;    // unit index m of the previous stage's row
  int units = 0;            // units of the stage ending at j
  Occupancy previous_occupancy;
  GpuSet gpus;  // GPUs of the stage ending at j
};

struct Row {
  std::map<Occupancy, Cell> by_occupancy;
  bool has_best = false;  // (a plain flag: std::optional<Cell> trips gcc's -Wmaybe-uninitialized)
  Cell best;
};

// How a program keeps its cells. kExact keeps the best cell per GPU occupancy (the published
// search). kGreedy keeps only the best cell of each (state, units) row: every plan it finds is
// still a real plan of the exact search's space, so its bottleneck bounds the exact search.
enum class Keep { kExact, kGreedy };

class PipelineProgram {
 public:
  PipelineProgram(const ModelProfile& profile, const CostModel& cost, const SearchRequest& request,
                  double upper_bound, Keep keep)
      : profile_(profile),
        cost_(cost),
        request_(request),
        states_(profile.num_states()),
        keep_(keep),
        rows_(static_cast<std::size_t>(states_) * request.units),
        live_rows_(states_),
        upper_bound_(upper_bound) {
    compute_depths();
  }

  // The best cell of the last state on all units, if any plan exists.
  const Cell* run() {
    initialise_first_stages();
    for (int m = 1; m < request_.units && !request_.single_stage; ++m) {
      // Rows of m-1 units are final now; list the live ones per state for extend().
      for (int j = 0; j < states_; ++j) {
        if (row(j, m - 1).has_best) live_rows_[j].push_back(m - 1);
      }
      for (int j = 1; j < states_; ++j) {
        if (may_live(j, m)) extend(j, m);
      }
    }
    const Row& last = row(states_ - 1, request_.units - 1);
    return last.has_best ? &last.best : nullptr;
  }

  // The largest cap below the request's at which a stage fits() turned down would fit (0: none).
  int same_above_cap() const { return same_above_cap_; }

  PipelineCandidate backtrack(const Cell& final_cell) {
    PipelineCandidate plan;
    plan.kind = request_.straight ? PlanKind::kStraight : PlanKind::kSearch;
    plan.units_total = request_.units;
    plan.gpus_per_unit = request_.gpus_per_unit;
    plan.bottleneck_s = final_cell.value;
    const Cell* cell = &final_cell;
    int last_state = states_ - 1;
    while (true) {
      PlannedStage stage;
      stage.first_state = cell->previous_state + 1;
      stage.last_state = last_state;
      stage.units = cell->units;
      stage.gpus = cell->gpus;
      plan.stages.push_back(stage);
      if (cell->previous_state < 0) break;
      last_state = cell->previous_state;
      cell =
          &row(cell->previous_state, cell->previous_row).by_occupancy.at(cell->previous_occupancy);
    }
    std::reverse(plan.stages.begin(), plan.stages.end());
    return plan;
  }

 private:
  Row& row(int j, int m) { return rows_[static_cast<std::size_t>(j) * request_.units + m]; }

  // depth_[j]: most stages a plan can still place after state j (longest path to the last
  // state in the antichain DAG); straight plans need one state per remaining unit.
  void compute_depths() {
    constexpr int kUnreachable = -1'000'000;
    depth_.assign(states_, kUnreachable);
    depth_[states_ - 1] = 0;
    for (int s = states_ - 2; s >= 0; --s) {
      for (int t : profile_.dag.states[s].successors)
        depth_[s] = std::max(depth_[s], depth_[t] + 1);
    }
  }

  // Whether a cell of states 0..j on m+1 units can be part of a final plan at or below the
  // bound. A cell failing this yields only candidates that can_still_win (or completion)
  // rejects, so skipping it whole changes nothing; it saves scanning its ancestors.
  bool may_live(int j, int m) const {
    if (request_.exhaustive) return true;
    const int units_left = request_.units - (m + 1);
    if (j == states_ - 1) return units_left == 0;
    if (units_left <= 0) return false;
    if (request_.straight && depth_[j] < units_left) return false;
    if (!std::isfinite(upper_bound_)) return true;
    const double bound = upper_bound_ * (1.0 + 1e-9);
    const double rest = profile_.compute_s.total() - profile_.compute_s.at(0, j);
    if (rest / (static_cast<double>(units_left) * request_.gpus_per_unit) > bound) return false;
    // The stages of states 0..j share their compute over (m+1) x rp GPUs, so one of them is
    // at least the average; the extra margin keeps rounding on the safe side.
    const double prefix = std::max(profile_.compute_s.at(0, j), 0.0);
    return prefix / (static_cast<double>(m + 1) * request_.gpus_per_unit) <= bound * (1.0 + 1e-12);
  }

  // Whether a plan for states 0..j on m+1 units with bottleneck `value` can end at or below
  // the upper bound. The states after j need at least (their compute / GPUs left) per stage.
  // Pruning the others changes no result: every comparison is strict, and the bound is itself
  // the bottleneck of a plan the search would find. The margin keeps rounding from pruning a
  // true winner.
  bool can_still_win(double value, int j, int m) const {
    const double bound = upper_bound_ * (1.0 + 1e-9);
    if (value > bound) return false;
    if (j == states_ - 1) return true;
    const int units_left = request_.units - (m + 1);
    if (units_left == 0) return false;
    const double rest = profile_.compute_s.total() - profile_.compute_s.at(0, j);
    return rest / (static_cast<double>(units_left) * request_.gpus_per_unit) <= bound;
  }

  bool fits(int first, int last, int stage_units, int m) {
    if (!request_.memory) return true;
    const StageMemoryLimit& limit = *request_.memory;
    // Stages after this one get at least one unit each.
    const int in_flight = std::min(limit.in_flight_cap, request_.units - m);
    const double parameters = profile_.parameter_bytes.at(first, last);
    const double activations = profile_.activation_bytes.at(first, last);
    const auto bytes = [&](int held) {
      return memory_bytes(parameters, activations, stage_units, held,
                          limit.optimizer_memory_scaling, limit.micro_batch_over_profile_batch);
    };
    if (bytes(in_flight) <= limit.gpu_memory_bytes) return true;
    // Turned down: with a cap of `held` or fewer micro-batches it would fit, and a search
    // under such a cap sees a different set of stages. Only a larger `held` than one already
    // found matters; the estimate's neighbours settle rounding.
    if (in_flight - 1 <= same_above_cap_) return false;
    const double per_micro_batch = activations * limit.micro_batch_over_profile_batch / stage_units;
    const double room = limit.gpu_memory_bytes - parameters * limit.optimizer_memory_scaling;
    int held = in_flight - 1;
    if (per_micro_batch > 0) {
      held = static_cast<int>(std::clamp(std::floor(room / per_micro_batch) + 1.0, 0.0,
                                         static_cast<double>(in_flight - 1)));
    }
    while (held > same_above_cap_ && bytes(held) > limit.gpu_memory_bytes) --held;
    same_above_cap_ = std::max(same_above_cap_, held);
    return false;
  }

  void initialise_first_stages() {
    const Occupancy empty(cost_.devices().num_machines(), 0);
    const int rows = request_.straight ? 1 : request_.units;
    for (int m = 0; m < rows; ++m) {
      const int gpus = (m + 1) * request_.gpus_per_unit;
      // The first stage always takes the lowest GPU ids (fresh-first from an empty cluster).
      auto placement = place(cost_.devices(), empty, gpus, PlacementPolicy::kFreshFirst);
      if (!placement) continue;
      for (int j = 0; j < states_; ++j) {
        if (!may_live(j, m)) continue;
        if (!fits(0, j, m + 1, m)) continue;
        const double value = std::max(profile_.compute_s.at(0, j) / gpus, 0.0);
        const bool is_final = j == states_ - 1 && m == request_.units - 1;
        if (!is_final && !can_still_win(value, j, m)) continue;
        Cell cell;
        cell.value = value;
        cell.units = m + 1;
        cell.gpus = placement->gpus;
        Row& r = row(j, m);
        r.by_occupancy[placement->occupancy] = cell;
        r.best = cell;
        r.has_best = true;
      }
    }
  }

  const std::vector<Placement>& placements(const Occupancy& occupancy, int stage_units) {
    // Looked up without copying the occupancy: this runs once per cell and stage size.
    auto found = placement_cache_.find(occupancy);
    if (found == placement_cache_.end()) {
      found = placement_cache_.emplace(occupancy, PlacementsBySize(request_.units + 1)).first;
    }
    std::optional<std::vector<Placement>>& slot = found->second[stage_units];
    if (!slot) {
      slot = place_rounds(cost_.devices(), occupancy, stage_units, request_.gpus_per_unit,
                          request_.policies);
    }
    return *slot;
  }

  void extend(int j, int m) {
    Row& target = row(j, m);
    bool has_best = target.has_best;
    Cell best = target.best;
    const int max_stage_units = request_.straight ? 1 : m;
    for (int k : profile_.ancestors(j)) {
      const std::vector<int>& live = live_rows_[k];
      if (live.empty() || live.back() < m - max_stage_units) continue;
      const double stage_compute = profile_.compute_s.at(k + 1, j);
      if (stage_compute < -0.5) continue;
      const double boundary_bytes = 2.0 * profile_.output_activation_bytes[k];
      // Stage units ascending is previous rows descending (the published order).
      for (auto it = live.rbegin(); it != live.rend() && *it >= m - max_stage_units; ++it) {
        const int stage_units = m - *it;
        const Row& previous = row(k, *it);
        if (!fits(k + 1, j, stage_units, m)) continue;
        const double stage_time =
            stage_compute / (static_cast<double>(stage_units) * request_.gpus_per_unit);
        if (!can_still_win(stage_time, j, m)) continue;
        for (const auto& [occupancy, cell] : previous.by_occupancy) {
          const double before = std::max(cell.value, stage_time);
          if (!can_still_win(before, j, m)) continue;
          for (const Placement& next : placements(occupancy, stage_units)) {
            const double value =
                std::max(before, cost_.transfer(cell.gpus, next.gpus, boundary_bytes));
            const bool better_overall = !has_best || value < best.value;
            auto existing = target.by_occupancy.find(next.occupancy);
            const bool better_here =
                keep_ == Keep::kExact &&
                (existing == target.by_occupancy.end() || value < existing->second.value);
            if (!better_overall && !better_here) continue;
            if (!can_still_win(value, j, m)) continue;
            Cell candidate;
            candidate.value = value;
            candidate.previous_state = k;
            candidate.previous_row = *it;
            candidate.units = stage_units;
            candidate.previous_occupancy = occupancy;
            candidate.gpus = next.gpus;
            if (better_overall) {
              best = candidate;
              has_best = true;
              if (keep_ == Keep::kGreedy) {
                target.by_occupancy.clear();
                target.by_occupancy.emplace(next.occupancy, std::move(candidate));
                continue;
              }
            }
            if (better_here) {
              if (existing == target.by_occupancy.end()) {
                target.by_occupancy.emplace(next.occupancy, std::move(candidate));
              } else {
                existing->second = std::move(candidate);
              }
            }
          }
        }
      }
    }
    target.best = std::move(best);
    target.has_best = has_best;
  }

  const ModelProfile& profile_;
  const CostModel& cost_;
  const SearchRequest& request_;
  const int states_;
  const Keep keep_;
  std::vector<Row> rows_;
  std::vector<std::vector<int>> live_rows_;  // per state: rows (m) with a cell, ascending
  std::vector<int> depth_;
  using PlacementsBySize = std::vector<std::optional<std::vector<Placement>>>;
  std::map<Occupancy, PlacementsBySize> placement_cache_;
  double upper_bound_;
  int same_above_cap_ = 0;
};

}  // namespace

double stage_memory_bytes(const ModelProfile& profile, int first_state, int last_state, int units,
                          int in_flight, double optimizer_memory_scaling,
                          double micro_batch_over_profile_batch) {
  return memory_bytes(profile.parameter_bytes.at(first_state, last_state),
                      profile.activation_bytes.at(first_state, last_state), units, in_flight,
                      optimizer_memory_scaling, micro_batch_over_profile_batch);
}

std::optional<PipelineCandidate> search_pipeline(const ModelProfile& profile, const CostModel& cost,
                                                 const SearchRequest& request,
                                                 int* same_above_cap) {
  int binding = 0;  // over every program run: they all see the same stages above it
  const auto done = [&](std::optional<PipelineCandidate> plan) {
    if (same_above_cap != nullptr) *same_above_cap = binding;
    return plan;
  };
  if (request.units < 1 || request.units * request.gpus_per_unit > cost.devices().num_gpus()) {
    return done(std::nullopt);
  }
  constexpr double kUnbounded = std::numeric_limits<double>::infinity();
  if (request.exhaustive) {
    PipelineProgram program(profile, cost, request, kUnbounded, Keep::kExact);
    const Cell* found = program.run();
    binding = program.same_above_cap();
    return done(found ? std::optional(program.backtrack(*found)) : std::nullopt);
  }
  // A plan on all states and units in one stage bounds the answer from above (the bottleneck
  // of any split is at least the average load), and it is a candidate of the final cell, so
  // the bounded program returns what the unbounded one does. (Its memory check holds one
  // micro-batch, whatever the cap: the same under every cap.)
  const int last = profile.num_states() - 1;
  const bool single_stage_fits =
      !request.memory || stage_memory_bytes(profile, 0, last, request.units,
                                            std::min(request.memory->in_flight_cap, 1),
                                            request.memory->optimizer_memory_scaling,
                                            request.memory->micro_batch_over_profile_batch) <=
                             request.memory->gpu_memory_bytes;
  std::vector<double> bounds;
  if (!request.straight && single_stage_fits) {
    bounds.push_back(profile.compute_s.total() /
                     (static_cast<double>(request.units) * request.gpus_per_unit));
  } else {
    // Without it (straight pipelines, or one stage over memory) a greedy pass (best cell per
    // row only) finds a real plan. Its bottleneck is no bound on what the published program
    // returns -- that program keeps one cell per occupancy, not per GPU set, so it can miss
    // the greedy plan -- but a bounded run is exact whenever it finds a plan: its cells at or
    // below the bound are those of the unbounded run. So: try the bound with some slack, then
    // a looser one, then none.
    PipelineProgram greedy(profile, cost, request, kUnbounded, Keep::kGreedy);
    const Cell* found = greedy.run();
    binding = std::max(binding, greedy.same_above_cap());
    if (found) {
      bounds.push_back(found->value * 1.02);
      bounds.push_back(found->value * 1.25);
    }
  }
  bounds.push_back(kUnbounded);
  for (double bound : bounds) {
    PipelineProgram exact(profile, cost, request, bound, Keep::kExact);
    const Cell* found = exact.run();
    binding = std::max(binding, exact.same_above_cap());
    if (found) return done(exact.backtrack(*found));
  }
  return done(std::nullopt);
}

std::vector<std::vector<GpuPair>> bipartition_gpu_pairs(
    const Devices& devices, const std::vector<PlacementPolicy>& policies) {
  const int n = devices.num_gpus();
  const Occupancy empty(devices.num_machines(), 0);
  std::vector<std::vector<GpuPair>> pairs(std::max(n, 1));
  for (int g = 1; g < n; ++g) {
    for (const Placement& first : place_rounds(devices, empty, g, 1, policies)) {
      for (const Placement& second : place_rounds(devices, first.occupancy, n - g, 1, policies)) {
        pairs[g].push_back({first.gpus, second.gpus});
      }
    }
  }
  return pairs;
}

double bipartition_bottleneck(const ModelProfile& profile, const CostModel& cost, int split,
                              const GpuPair& pair, double activation_factor) {
  const double head = profile.compute_s.at(0, split);
  const double tail = profile.compute_s.at(split + 1, profile.num_states() - 1);
  const double cut_bytes = activation_factor * profile.output_activation_bytes[split];
  return std::max({head / pair.first.size(), tail / pair.second.size(),
                   cost.transfer(pair.first, pair.second, cut_bytes)});
}

PipelineCandidate bipartition_candidate(const ModelProfile& profile, const CostModel& cost,
                                        int split, const GpuPair& pair, double activation_factor) {
  PipelineCandidate plan;
  plan.kind = PlanKind::kBipartition;
  plan.units_total = cost.devices().num_gpus();
  plan.gpus_per_unit = 1;
  plan.bottleneck_s = bipartition_bottleneck(profile, cost, split, pair, activation_factor);
  plan.stages.push_back({0, split, pair.first.size(), pair.first});
  plan.stages.push_back({split + 1, profile.num_states() - 1, pair.second.size(), pair.second});
  return plan;
}

std::vector<PipelineCandidate> bipartition_candidates(const ModelProfile& profile,
                                                      const CostModel& cost,
                                                      const std::vector<PlacementPolicy>& policies,
                                                      double activation_factor) {
  const auto pairs = bipartition_gpu_pairs(cost.devices(), policies);
  std::vector<PipelineCandidate> out;
  for (int l = 0; l + 1 < profile.num_states(); ++l) {
    for (int g = 1; g < cost.devices().num_gpus(); ++g) {
      for (const GpuPair& pair : pairs[g]) {
        out.push_back(bipartition_candidate(profile, cost, l, pair, activation_factor));
      }
    }
  }
  return out;
}

}  // namespace harness::planner
