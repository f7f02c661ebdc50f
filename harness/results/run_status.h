// status.json read back: one run's (raw/POINT/SYSTEM/repN/status.json, written when the run
// ends) and the study's (the results folder's, written when the study ends). A status is
// input like any file of a results folder: a corrupt one is an error naming its file and
// field, never a run silently skipped or a study reported as fine.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace harness {

enum class RunOutcome { kComplete, kFailed, kInterrupted };

// How the run in `raw` ended; nothing when it has no status.json (it never ran, or the
// harness was killed before it ended). InputError for a malformed file.
std::optional<RunOutcome> read_run_outcome(const std::filesystem::path& raw);

struct StudyStatus {
  bool complete = false;
  long long runs = 0;      // planned
  long long failures = 0;  // failed or interrupted
};

// The study's status.json in `directory`; nothing when the study has not ended.
std::optional<StudyStatus> read_study_status(const std::filesystem::path& directory);

}  // namespace harness
