// Comparison tables laid out like PyTorch's compare_ddp summary: one table per point and
// phase, one row per system, and for each of mean, p50, p90, p95, p99 the value followed by its
// change in percent against the baseline system.
#pragma once

#include <optional>
#include <string>

#include "harness/results/run_summary.h"

namespace harness {

inline constexpr const char* kTableStatistics[] = {"mean", "p50", "p90", "p95", "p99"};

// (value - baseline) / baseline * 100; nullopt when the baseline is missing or zero.
std::optional<double> delta_percent(double value, std::optional<double> baseline);

std::string render_markdown_tables(const RunSummary& summary);
std::string render_csv_table(const RunSummary& summary);

}  // namespace harness
