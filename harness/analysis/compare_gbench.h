// Google Benchmark JSON (--benchmark_format=json / --benchmark_out) as sample sets for
// `harness compare --gbench`: one set per benchmark, its samples the real_time of each
// repetition (run_type "iteration"), in nanoseconds: each repetition is a run. Aggregates (mean,
// median, stddev, cv) are ignored: the test needs the repetitions themselves.
#pragma once

#include <filesystem>
#include <vector>

#include "harness/analysis/compare_samples.h"

namespace harness {

// Throws InputError for a file that is not Google Benchmark JSON or has no benchmarks.
std::vector<SampleSet> read_gbench_samples(const std::filesystem::path& path);

// Nanoseconds per `unit` ("ns", "us", "ms", "s"); throws InputError otherwise.
double gbench_unit_ns(const std::string& unit);

}  // namespace harness
