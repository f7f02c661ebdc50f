// When a run's ranks are declared hung or out of time, the same under every launcher: hung
// when no live rank has written a heartbeat for run.stall_timeout_s (the live rank that got
// least far is named: fewest heartbeats, the earliest to fall silent on a tie); timed out when
// the whole run exceeded run.timeout_s.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "harness/launch/local_launcher.h"

namespace harness {

struct RankProgress {
  long long heartbeats = 0;                         // lines the rank has written so far
  std::chrono::steady_clock::time_point last_seen;  // when the count last grew
  bool live = true;                                 // false once it has exited
};

// The failure to end the run with, or nothing while it may go on.
std::optional<RankFailure> stall_or_timeout(const std::vector<RankProgress>& ranks,
                                            const LaunchLimits& limits,
                                            std::chrono::steady_clock::time_point start);

}  // namespace harness
