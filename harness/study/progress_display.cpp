#include "harness/study/progress_display.h"

#include <cstdio>

namespace harness {

using Clock = std::chrono::steady_clock;

std::string format_duration(double seconds) {
  const long long s = static_cast<long long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm%02llds", s / 3600, s / 60 % 60, s % 60);
  } else if (s >= 60) {
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%llds", s);
  }
  return buffer;
}

ProgressDisplay::ProgressDisplay(size_t total_runs, bool interactive)
    : total_(total_runs), interactive_(interactive), start_(Clock::now()) {}

std::string ProgressDisplay::eta_text() const {
  if (finished_ == 0) return "ETA --";
  // Mean seconds of finished runs times the runs still to go, minus what the current run
  // has already spent.
  const double mean = finished_seconds_ / static_cast<double>(finished_);
  const double current = std::chrono::duration<double>(Clock::now() - run_start_).count();
  double remaining = mean * static_cast<double>(total_ - finished_) - current;
  if (remaining < 0) remaining = 0;
  return "ETA " + format_duration(remaining);
}

void ProgressDisplay::begin_run(size_t index, const std::string& description,
                                long long iterations) {
  index_ = index;
  description_ = description;
  iterations_ = iterations;
  run_start_ = Clock::now();
  update(0);
}

void ProgressDisplay::update(long long heartbeats) {
  if (!interactive_) return;
  const auto now = Clock::now();
  if (heartbeats > 0 && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r\033[K[run %zu/%zu] %s  iter %lld/%lld  elapsed %s  %s", index_ + 1,
               total_, description_.c_str(), heartbeats / 2, iterations_,
               format_duration(elapsed).c_str(), eta_text().c_str());
  std::fflush(stderr);
}

void ProgressDisplay::end_run(bool ok, double seconds) {
  ++finished_;
  finished_seconds_ += seconds;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (interactive_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "[run %zu/%zu] %s  %s in %s  (elapsed %s, %s)\n", index_ + 1, total_,
               description_.c_str(), ok ? "done" : "FAILED", format_duration(seconds).c_str(),
               format_duration(elapsed).c_str(), eta_text().c_str());
  std::fflush(stderr);
}

void ProgressDisplay::finish() {
  if (interactive_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace harness
