// The exact counters of two sides compared exactly (harness/results/run_counters.h): an exact
// counter that grows is a regression and one that shrinks an improvement, whatever the timing
// noise; a layout that differs is a change; peak memory counts beyond a tolerance.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/compare_samples.h"
#include "harness/results/run_counters.h"

namespace harness {

// The counters of one system at one point.
struct CounterSet {
  std::string group;  // the point's label
  std::string name;   // the system
  std::vector<RunCounter> counters;
};

// One row per counter both sides have, matched by point, system and counter name, in the
// base's order. `memory_tolerance_pct` applies to measured counters.
std::vector<CounterRow> compare_counters(const std::vector<CounterSet>& base,
                                         const std::vector<CounterSet>& candidate,
                                         double memory_tolerance_pct);

}  // namespace harness
