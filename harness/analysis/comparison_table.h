// Comparison tables laid out like PyTorch's compare_ddp summary: one table per point and
// phase, one row per system, and for each of mean, p50, p90, p95, p99 the value followed by its
// change in percent against the baseline system.
#pragma once

#include <optional>
#include <string>

#include "harness/results/run_summary.h"

namespace harness {

inline constexpr const char* kTableStatistics[] = {"mean", "p50", "p90", "p95", "p99"};

// A percentile q of n samples with n (1 - q) < 1 has less than one sample beyond it: linear
// interpolation puts it between the two largest samples, so it says no more about the tail than
// the maximum does (p90 needs 10 samples, p95 20, p99 100). The tables print such a value, and its
// delta%, with this mark and end with the legend.
inline constexpr const char* kFewSamplesMark = "†";
inline constexpr const char* kFewSamplesLegend =
    "† fewer samples than the percentile needs (p90: 10, p95: 20, p99: 100): less than one "
    "sample lies beyond it, so it is an interpolation between the two largest and tells no more "
    "of the tail than the maximum.";
bool percentile_too_few_samples(const std::string& statistic, size_t samples);

// (value - baseline) / baseline * 100; nullopt when the baseline is missing or zero.
std::optional<double> delta_percent(double value, std::optional<double> baseline);

std::string render_markdown_tables(const RunSummary& summary);
std::string render_csv_table(const RunSummary& summary);

}  // namespace harness
