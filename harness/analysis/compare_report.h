// A comparison as people and programs read it: Markdown (the table, the counters that
// changed, warnings and one verdict line) and JSON (every row and counter, the exit code).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "harness/analysis/compare_samples.h"

namespace harness {

std::string render_comparison_markdown(const Comparison& comparison);
nlohmann::json comparison_to_json(const Comparison& comparison);

// The last line of the Markdown: the verdict and how many runs it rests on, e.g.
// "no regression: iteration judged on 6 runs (base) and 6 runs (new)".
std::string verdict_line(const Comparison& comparison);

}  // namespace harness
