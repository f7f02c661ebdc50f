#include "harness/launch/stall_check.h"

#include <cstdio>

namespace harness {

std::optional<RankFailure> stall_or_timeout(const std::vector<RankProgress>& ranks,
                                            const LaunchLimits& limits,
                                            std::chrono::steady_clock::time_point start) {
  const auto now = std::chrono::steady_clock::now();
  const auto seconds_since = [now](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(now - t).count();
  };
  bool any_recent = false;
  int suspect = -1;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].live) continue;
    if (seconds_since(ranks[r].last_seen) < limits.stall_timeout_s) any_recent = true;
    if (suspect < 0 || ranks[r].heartbeats < ranks[suspect].heartbeats ||
        (ranks[r].heartbeats == ranks[suspect].heartbeats &&
         ranks[r].last_seen < ranks[suspect].last_seen)) {
      suspect = static_cast<int>(r);
    }
  }
  if (!any_recent && suspect >= 0) {
    char reason[256];
    std::snprintf(reason, sizeof reason,
                  "hung: no progress from any rank for %g s (run.stall_timeout_s); rank %d "
                  "got least far (%lld heartbeat lines)",
                  limits.stall_timeout_s, suspect, ranks[suspect].heartbeats);
    return RankFailure{suspect, reason, ""};
  }
  if (seconds_since(start) > limits.timeout_s) {
    char reason[128];
    std::snprintf(reason, sizeof reason, "timed out: the run exceeded run.timeout_s = %g s",
                  limits.timeout_s);
    return RankFailure{suspect >= 0 ? suspect : 0, reason, ""};
  }
  return std::nullopt;
}

}  // namespace harness
