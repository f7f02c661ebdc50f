// What a run does per iteration, as opposed to how long it takes: collectives and their bytes,
// the bucket layout, model FLOPs, the bytes each rank holds. These are exact (the same code on
// the same spec gives the same figures every run), so `harness compare` gates them exactly,
// free of timing noise; peak resident memory is the one measured figure among them and is
// compared within a tolerance.
#pragma once

#include <string>
#include <vector>

#include "harness/results/report_samples.h"

namespace harness {

enum class CounterKind {
  exact,     // any difference is a definite change; more is worse
  layout,    // a list compared for equality (the bucket sizes): a change, neither better nor worse
  measured,  // a measured figure: a change counts beyond the compare's memory tolerance
};

struct RunCounter {
  std::string name;  // "all-reduce wire bytes per iteration", ...
  CounterKind kind = CounterKind::exact;
  double value = 0;
  std::string layout;  // for CounterKind::layout: the list as text, e.g. "273448 66560"
};

// The counters the run folders of one system hold (its first repeat's buckets.json, flops.json
// and memory_rank<r>.json); only those the system wrote, so a pipeline has no bucket counters.
std::vector<RunCounter> run_counters(const SystemSamples& system);

}  // namespace harness
