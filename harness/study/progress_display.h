// Progress of a study on stderr: on a terminal one line rewritten in place (run i/N, what it
// is, iteration, elapsed, ETA); otherwise one line per finished run, for logs.
#pragma once

#include <chrono>
#include <string>

namespace harness {

class ProgressDisplay {
 public:
  ProgressDisplay(size_t total_runs, bool interactive);
  void begin_run(size_t index, const std::string& description, long long iterations);
  // `heartbeats` as counted by the launcher: two lines per iteration of rank 0.
  void update(long long heartbeats);
  void end_run(bool ok, double seconds);
  void finish();

 private:
  std::string eta_text() const;
  size_t total_;
  bool interactive_;
  size_t index_ = 0;
  size_t finished_ = 0;
  std::string description_;
  long long iterations_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point run_start_;
  double finished_seconds_ = 0;
  std::chrono::steady_clock::time_point last_draw_{};
};

std::string format_duration(double seconds);

}  // namespace harness
