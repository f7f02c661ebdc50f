#include "planner/pipeline_search.h"

#include <algorithm>
#include <limits>
#include <map>

namespace harness::planner {
namespace {

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

class PipelineProgram {
 public:
  PipelineProgram(const ModelProfile& profile, const CostModel& cost, const SearchRequest& request)
      : profile_(profile),
        cost_(cost),
        request_(request),
        states_(profile.num_states()),
        rows_(static_cast<std::size_t>(states_) * request.units) {}

  std::optional<PipelineCandidate> run() {
    // A plan on all states and units in one stage bounds the answer from above; partial plans
    // that cannot beat it are not kept (see can_still_win).
    if (!request_.straight && fits(0, states_ - 1, request_.units, request_.units - 1)) {
      upper_bound_ = profile_.compute_s.total() /
                     (static_cast<double>(request_.units) * request_.gpus_per_unit);
    }
    initialise_first_stages();
    for (int m = 1; m < request_.units; ++m) {
      for (int j = 1; j < states_; ++j) extend(j, m);
    }
    const Row& last = row(states_ - 1, request_.units - 1);
    if (!last.has_best) return std::nullopt;
    return backtrack(last.best);
  }

 private:
  Row& row(int j, int m) { return rows_[static_cast<std::size_t>(j) * request_.units + m]; }

  // Whether a plan for states 0..j on m+1 units with bottleneck `value` can end strictly below
  // the upper bound. The states after j need at least (their compute / GPUs left) per stage.
  // Pruning the others changes no result: every comparison is strict, and the bound is itself
  // a candidate of the final cell. The margin keeps rounding from pruning a true winner.
  bool can_still_win(double value, int j, int m) const {
    const double bound = upper_bound_ * (1.0 + 1e-9);
    if (value > bound) return false;
    if (j == states_ - 1) return true;
    const int units_left = request_.units - (m + 1);
    if (units_left == 0) return false;
    const double rest = profile_.compute_s.total() - profile_.compute_s.at(0, j);
    return rest / (static_cast<double>(units_left) * request_.gpus_per_unit) <= bound;
  }

  bool fits(int first, int last, int stage_units, int m) const {
    if (!request_.memory) return true;
    const StageMemoryLimit& limit = *request_.memory;
    // Stages after this one get at least one unit each.
    const int in_flight = std::min(limit.in_flight_cap, request_.units - m);
    return stage_memory_bytes(profile_, first, last, stage_units, in_flight,
                              limit.optimizer_memory_scaling,
                              limit.micro_batch_over_profile_batch) <= limit.gpu_memory_bytes;
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
    auto key = std::make_pair(occupancy, stage_units);
    auto found = placement_cache_.find(key);
    if (found != placement_cache_.end()) return found->second;
    auto placed = place_rounds(cost_.devices(), occupancy, stage_units, request_.gpus_per_unit,
                               request_.policies);
    return placement_cache_.emplace(std::move(key), std::move(placed)).first->second;
  }

  void extend(int j, int m) {
    if (m == request_.units - 1 && j != states_ - 1) return;  // cannot be completed
    Row& target = row(j, m);
    bool has_best = target.has_best;
    Cell best = target.best;
    const int max_stage_units = request_.straight ? 1 : m;
    for (int k : profile_.ancestors(j)) {
      const double stage_compute = profile_.compute_s.at(k + 1, j);
      if (stage_compute < -0.5) continue;
      const double boundary_bytes = 2.0 * profile_.output_activation_bytes[k];
      for (int stage_units = 1; stage_units <= max_stage_units; ++stage_units) {
        const Row& previous = row(k, m - stage_units);
        if (!previous.has_best) continue;
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
                existing == target.by_occupancy.end() || value < existing->second.value;
            if (!better_overall && !better_here) continue;
            if (!can_still_win(value, j, m)) continue;
            Cell candidate;
            candidate.value = value;
            candidate.previous_state = k;
            candidate.previous_row = m - stage_units;
            candidate.units = stage_units;
            candidate.previous_occupancy = occupancy;
            candidate.gpus = next.gpus;
            if (better_overall) {
              best = candidate;
              has_best = true;
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

  const ModelProfile& profile_;
  const CostModel& cost_;
  const SearchRequest& request_;
  const int states_;
  std::vector<Row> rows_;
  std::map<std::pair<Occupancy, int>, std::vector<Placement>> placement_cache_;
  double upper_bound_ = std::numeric_limits<double>::infinity();
};

}  // namespace

double stage_memory_bytes(const ModelProfile& profile, int first_state, int last_state, int units,
                          int in_flight, double optimizer_memory_scaling,
                          double micro_batch_over_profile_batch) {
  const double parameters = profile.parameter_bytes.at(first_state, last_state);
  const double activations = profile.activation_bytes.at(first_state, last_state);
  return parameters * optimizer_memory_scaling +
         in_flight * activations * micro_batch_over_profile_batch / units;
}

std::optional<PipelineCandidate> search_pipeline(const ModelProfile& profile, const CostModel& cost,
                                                 const SearchRequest& request) {
  if (request.units < 1 || request.units * request.gpus_per_unit > cost.devices().num_gpus()) {
    return std::nullopt;
  }
  return PipelineProgram(profile, cost, request).run();
}

std::vector<PipelineCandidate> bipartition_candidates(const ModelProfile& profile,
                                                      const CostModel& cost,
                                                      const std::vector<PlacementPolicy>& policies,
                                                      double activation_factor) {
  const Devices& devices = cost.devices();
  const int n = devices.num_gpus();
  const int states = profile.num_states();
  const Occupancy empty(devices.num_machines(), 0);
  // GPU pairs depend only on the first stage's GPU count: place them once.
  std::vector<std::vector<std::pair<GpuSet, GpuSet>>> pairs(n);
  for (int g = 1; g < n; ++g) {
    for (const Placement& first : place_rounds(devices, empty, g, 1, policies)) {
      for (const Placement& second : place_rounds(devices, first.occupancy, n - g, 1, policies)) {
        pairs[g].emplace_back(first.gpus, second.gpus);
      }
    }
  }
  std::vector<PipelineCandidate> out;
  for (int l = 0; l + 1 < states; ++l) {
    const double head = profile.compute_s.at(0, l);
    const double tail = profile.compute_s.at(l + 1, states - 1);
    const double cut_bytes = activation_factor * profile.output_activation_bytes[l];
    for (int g = 1; g < n; ++g) {
      for (const auto& [first, second] : pairs[g]) {
        PipelineCandidate plan;
        plan.kind = PlanKind::kBipartition;
        plan.units_total = n;
        plan.gpus_per_unit = 1;
        plan.bottleneck_s = std::max(
            {head / first.size(), tail / second.size(), cost.transfer(first, second, cut_bytes)});
        plan.stages.push_back({0, l, first.size(), first});
        plan.stages.push_back({l + 1, states - 1, second.size(), second});
        out.push_back(std::move(plan));
      }
    }
  }
  return out;
}

}  // namespace harness::planner
