#include "planner/search/pipeline_plan.h"

#include <sstream>

namespace harness::planner {

const char* to_string(PlanKind kind) {
  switch (kind) {
    case PlanKind::kSearch:
      return "search";
    case PlanKind::kStraight:
      return "straight";
    default:
      return "bipartition";
  }
}

std::string describe_stages(const PipelineCandidate& plan) {
  std::ostringstream out;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const PlannedStage& stage = plan.stages[s];
    out << (s ? " " : "") << '[' << stage.first_state << ".." << stage.last_state << "]x"
        << stage.gpus.size();
  }
  return out.str();
}

}  // namespace harness::planner
