#include "harness/analysis/compare_results.h"

#include "common/input_error.h"
#include "common/statistics.h"

namespace harness {

std::vector<SampleSet> result_sample_sets(const ResultSide& side, const std::string& metric) {
  std::vector<SampleSet> sets;
  const ResultSamples& first = side.folders.front();
  for (size_t p = 0; p < first.points.size(); ++p) {
    for (size_t s = 0; s < first.points[p].systems.size(); ++s) {
      for (const char* phase : kPhases) {
        SampleSet set{first.points[p].point.label, first.points[p].systems[s].name, phase, {}, 0};
        // read_result_side checked that every folder has these points and systems.
        for (const ResultSamples& folder : side.folders) {
          for (const PhaseSamples& run : folder.points[p].systems[s].runs) {
            const auto found = run.find(phase);
            if (found == run.end() || found->second.empty()) continue;
            const std::vector<double>& iterations = found->second;
            set.runs.push_back(metric == "mean" ? summarize(iterations).mean
                                                : percentile(iterations, 50));
            set.iterations += iterations.size();
          }
        }
        sets.push_back(std::move(set));
      }
    }
  }
  return sets;
}

std::vector<CounterSet> result_counter_sets(const ResultSide& side) {
  std::vector<CounterSet> sets;
  for (const auto& point : side.folders.front().points) {
    for (const auto& system : point.systems) {
      sets.push_back({point.point.label, system.name, run_counters(system)});
    }
  }
  return sets;
}

Comparison compare_result_sides(const ResultSide& base, const ResultSide& candidate,
                                const CompareOptions& options, bool allow_study_change) {
  const std::string base_machine = machine_of(base.folders.front());
  const std::string new_machine = machine_of(candidate.folders.front());
  if (base_machine != new_machine) {
    throw InputError("base and new ran on different machines (" + base_machine + "; " +
                     new_machine +
                     "): no verdict across machines; run both on one (harness ab) and keep a "
                     "stored baseline for trend plots");
  }
  std::vector<std::string> notes;
  if (const std::string difference = study_difference(base, candidate); !difference.empty()) {
    if (!allow_study_change) {
      throw InputError("base and new ran different studies (" + difference +
                       "); --allow-spec-change compares them anyway");
    }
    notes.push_back("base and new ran different studies (" + difference + ")");
  }
  Comparison comparison =
      compare_sample_sets(result_sample_sets(base, options.metric),
                          result_sample_sets(candidate, options.metric), options);
  comparison.counters = compare_counters(result_counter_sets(base), result_counter_sets(candidate),
                                         options.memory_tolerance_pct);
  comparison.notes = std::move(notes);
  comparison.source = "results";
  comparison.unit = "ms";
  return comparison;
}

}  // namespace harness
