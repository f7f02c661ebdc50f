// Outputs of a planning sweep: the console table, CSV, and the plan JSON that the pipeline
// runtime executes (schema in planner/README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "planner/model/model_profile.h"
#include "planner/search/planner.h"

namespace harness::planner {

// "gbs, dp_no_overlap, dp_p3, dp_overlap, best_hybrid | plan", one row per batch size.
void write_table(std::ostream& out, const SweepResult& sweep);
// Same columns, comma separated, with a header row.
void write_csv(std::ostream& out, const SweepResult& sweep);
// Full detail: inputs, and for every batch size the estimates and the plan's stages.
nlohmann::json plan_json(const ModelProfile& profile, const PlannerOptions& options,
                         const SweepResult& sweep);

std::string format_speedup(double value);  // four decimals, as the published planner prints

}  // namespace harness::planner
