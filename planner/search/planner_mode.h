// The two behaviours of the planner: `compat` reproduces the published planner, quirks
// included; `dapple` fixes them and adds memory and topology awareness.
#pragma once

#include <optional>
#include <string>

namespace harness::planner {

enum class PlannerMode { kCompat, kDapple };

inline const char* to_string(PlannerMode mode) {
  return mode == PlannerMode::kCompat ? "compat" : "dapple";
}

inline std::optional<PlannerMode> parse_planner_mode(const std::string& text) {
  if (text == "compat") return PlannerMode::kCompat;
  if (text == "dapple") return PlannerMode::kDapple;
  return std::nullopt;
}

}  // namespace harness::planner
