// Results folders as a comparison's source: each side's runs (every complete repeat of every
// folder) as one value per run, its exact counters, and the checks that make a verdict
// meaningful: both sides ran on one machine and the same study.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/compare_counters.h"
#include "harness/analysis/compare_samples.h"
#include "harness/results/result_side.h"

namespace harness {

// Per point, system and phase (manifest order), each run's `metric` (p50 | mean) of its
// iterations pooled over its ranks.
std::vector<SampleSet> result_sample_sets(const ResultSide& side, const std::string& metric);

// Per point and system, the exact counters of the side's first folder.
std::vector<CounterSet> result_counter_sets(const ResultSide& side);

// Throws InputError when the sides ran on different machines (a stored baseline from another
// machine is for trend plots, never a verdict), or ran different studies unless
// `allow_study_change` (then the difference is a note of the comparison).
Comparison compare_result_sides(const ResultSide& base, const ResultSide& candidate,
                                const CompareOptions& options, bool allow_study_change);

}  // namespace harness
