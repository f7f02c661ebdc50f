// `harness run SPEC --resume RESULTS_DIR`: which runs of an earlier, interrupted or failed
// study already have complete results (they are kept and not run again) and whether the
// folder was made from the same study at all.
#pragma once

#include <filesystem>

#include "harness/spec/spec.h"

namespace harness {

// A run folder holds complete results when its status.json says "complete" and every rank's
// rank<r>.csv parses and has `iterations` rows.
bool run_has_complete_results(const std::filesystem::path& raw, long long world_size,
                              long long iterations);

// Throws InputError naming the first difference when `directory` is not a results folder of
// `experiment` (other name, systems, points, world sizes, repeats, iterations or warm-up).
void check_resumable(const std::filesystem::path& directory, const Experiment& experiment);

}  // namespace harness
