#include "harness/analysis/sequential_gate.h"

#include <algorithm>
#include <cmath>

namespace harness {

std::vector<long long> look_schedule(long long first_rounds, long long max_rounds) {
  std::vector<long long> looks;
  for (long long rounds = first_rounds; rounds < max_rounds; rounds *= 2) looks.push_back(rounds);
  looks.push_back(max_rounds);
  return looks;
}

double alpha_per_look(double alpha, size_t looks) {
  return alpha / double(std::max<size_t>(looks, 1));
}

bool has_undecided_row(const Comparison& comparison) {
  return std::any_of(comparison.rows.begin(), comparison.rows.end(), [](const CompareRow& row) {
    return row.gated &&
           (row.verdict == Verdict::unresolved || row.verdict == Verdict::too_few_runs);
  });
}

std::optional<long long> runs_needed(const CompareRow& row, double threshold_pct) {
  if (!row.shift) return std::nullopt;
  const double half_width = (row.change_high_pct - row.change_low_pct) / 2;
  const double distance = std::min(std::fabs(row.change_pct - threshold_pct),
                                   std::fabs(row.change_pct + threshold_pct));
  if (distance < 1e-9 || half_width <= 0) return std::nullopt;
  const double runs_now = double(std::min(row.runs_base, row.runs_new));
  return (long long)std::ceil(runs_now * (half_width / distance) * (half_width / distance));
}

}  // namespace harness
