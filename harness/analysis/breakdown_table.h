// The time breakdown table of a study (HiDup's Table III shape, in table.md): per point and
// system, one traced iteration of the first repeat split into compute (less the all-to-alls
// it waited in), all-to-all, all-reduce, send, recv and idle time, in ms, mean over ranks
// (harness/analysis/trace_breakdown.h; `harness trace` gives every rank and the merged trace),
// with the traced iteration's time beside the run's median.
// Empty when no run was traced; a run whose traces cannot be read is left out (`harness trace`
// names what is wrong with it).
#pragma once

#include <filesystem>
#include <string>

namespace harness {

// A traced iteration slower than 90% of its run's iterations or faster than 10% of them: the
// table marks it and ends with the legend, so that a breakdown of an outlier says so.
inline constexpr const char* kAtypicalMark = "‡";
inline constexpr const char* kAtypicalLegend =
    "‡ the traced iteration lies beyond the run's p90 or below its p10: its breakdown may not be "
    "the run's typical iteration.";

std::string render_breakdown_markdown(const std::filesystem::path& run_directory,
                                      const std::string& experiment);

}  // namespace harness
