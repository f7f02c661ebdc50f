// A results folder of `harness run` (or a folder of them from one study, as `harness ab` writes
// per side) as one addition to a history: per point and system, each run's p50, p90, p99 and mean
// of every phase, its MFU and tokens per second where the run has them, and the exact counters
// (harness/results/run_counters.h) once; with the environment's fingerprint.
#pragma once

#include <filesystem>
#include <string>

#include "harness/history/history_records.h"
#include "harness/results/result_side.h"

namespace harness {

struct AdditionRequest {
  std::filesystem::path results;
  std::string commit;       // "": env.json's harness revision
  std::string branch;       // "": unknown
  std::string machine;      // "": env.json's hostname (CI runners whose names change set this)
  std::string commit_time;  // "": `git show` of the commit where git knows it, else the run's start
  // A control measured in the same job: the same spec run by a reference build (ab's base side,
  // or a pinned build); "": none.
  std::filesystem::path control;
};

// Throws InputError for a folder that is not a results folder, a study whose runs all failed,
// or a revision that names no commit ("unknown", or "-dirty" without --commit); and for a control
// of another study or machine (another fingerprint) or without a complete run.
HistoryAddition addition_from_results(const AdditionRequest& request);

// The fingerprint of what a result depends on besides the code: the machine (its name, CPU model
// and cores), LibTorch, BLAS, the device and GPU, and the spec as resolved less its output folder
// and repeats.
EnvironmentFingerprint environment_fingerprint(const ResultSamples& folder,
                                               const std::string& machine);

}  // namespace harness
