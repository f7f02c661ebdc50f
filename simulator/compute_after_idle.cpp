#include "simulator/compute_after_idle.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace harness::simulator {

double AfterIdleCurve::ratio(double idle_s, bool backward_pass) const {
  if (gap_s.empty() || !(idle_s > 0)) return 1.0;
  const std::vector<double>& at = backward_pass ? backward : forward;
  const auto upper = std::upper_bound(gap_s.begin(), gap_s.end(), idle_s);
  if (upper == gap_s.end()) return at.back();
  const size_t i = static_cast<size_t>(upper - gap_s.begin());
  const double x0 = i == 0 ? 0.0 : gap_s[i - 1];
  const double y0 = i == 0 ? 1.0 : at[i - 1];
  return y0 + (at[i] - y0) * (idle_s - x0) / (gap_s[i] - x0);
}

AfterIdleCurve after_idle_curve(const std::vector<double>& gap_ms,
                                const std::vector<double>& forward_ms,
                                const std::vector<double>& backward_ms) {
  if (gap_ms.size() < 2 || forward_ms.size() != gap_ms.size() ||
      backward_ms.size() != gap_ms.size()) {
    throw std::invalid_argument(
        "after_idle: expected gap 0 and at least one gap, each with a "
        "forward and a backward time");
  }
  if (gap_ms.front() != 0) throw std::invalid_argument("after_idle: the first gap must be 0");
  AfterIdleCurve curve;
  for (size_t g = 0; g < gap_ms.size(); ++g) {
    if (!(forward_ms[g] > 0) || !(backward_ms[g] > 0)) {
      throw std::invalid_argument("after_idle: times must be positive (gap " +
                                  std::to_string(gap_ms[g]) + " ms)");
    }
    if (g == 0) continue;
    if (!(gap_ms[g] > gap_ms[g - 1])) {
      throw std::invalid_argument("after_idle: gaps must increase");
    }
    curve.gap_s.push_back(gap_ms[g] / 1000.0);
    curve.forward.push_back(std::max(1.0, forward_ms[g] / forward_ms[0]));
    curve.backward.push_back(std::max(1.0, backward_ms[g] / backward_ms[0]));
  }
  return curve;
}

AfterIdleCurve mix_after_idle(const std::vector<const AfterIdleCurve*>& curves,
                              const std::vector<double>& forward_weights,
                              const std::vector<double>& backward_weights) {
  AfterIdleCurve mixed;
  for (const AfterIdleCurve* curve : curves) {
    if (curve) mixed.gap_s.insert(mixed.gap_s.end(), curve->gap_s.begin(), curve->gap_s.end());
  }
  std::sort(mixed.gap_s.begin(), mixed.gap_s.end());
  mixed.gap_s.erase(std::unique(mixed.gap_s.begin(), mixed.gap_s.end()), mixed.gap_s.end());
  double forward_total = 0, backward_total = 0;
  for (size_t c = 0; c < curves.size(); ++c) {
    forward_total += forward_weights[c];
    backward_total += backward_weights[c];
  }
  for (double gap : mixed.gap_s) {
    double f = 0, b = 0;
    for (size_t c = 0; c < curves.size(); ++c) {
      const bool measured = curves[c] && !curves[c]->empty();
      f += forward_weights[c] * (measured ? curves[c]->ratio(gap, false) : 1.0);
      b += backward_weights[c] * (measured ? curves[c]->ratio(gap, true) : 1.0);
    }
    mixed.forward.push_back(forward_total > 0 ? f / forward_total : 1.0);
    mixed.backward.push_back(backward_total > 0 ? b / backward_total : 1.0);
  }
  return mixed;
}

}  // namespace harness::simulator
