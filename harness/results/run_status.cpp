#include "harness/results/run_status.h"

#include "common/json_fields.h"
#include "common/json_file.h"
#include "common/limits.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<RunOutcome> read_run_outcome(const fs::path& raw) {
  const fs::path path = raw / "status.json";
  if (!fs::exists(path)) return std::nullopt;
  const json status = read_json_file(path);
  const JsonFields fields(path.string());
  const std::string outcome = fields.text(status, "", "status");
  if (outcome == "complete") return RunOutcome::kComplete;
  if (outcome == "failed") return RunOutcome::kFailed;
  if (outcome == "interrupted") return RunOutcome::kInterrupted;
  fields.fail("status", "expected complete, failed or interrupted, got '" + outcome + "'");
}

std::optional<StudyStatus> read_study_status(const fs::path& directory) {
  const fs::path path = directory / "status.json";
  if (!fs::exists(path)) return std::nullopt;
  const json document = read_json_file(path);
  const JsonFields fields(path.string());
  StudyStatus status;
  status.complete = fields.boolean(document, "", "complete");
  status.runs = fields.integer(document, "", "runs", 0, kMaxRuns);
  status.failures = static_cast<long long>(
      fields.array(document, "", "failures", static_cast<size_t>(kMaxRuns)).size());
  if (status.complete != (status.failures == 0) || status.failures > status.runs) {
    fields.fail("complete", std::string(status.complete ? "true" : "false") + " with " +
                                std::to_string(status.failures) + " failures of " +
                                std::to_string(status.runs) + " runs");
  }
  return status;
}

}  // namespace harness
