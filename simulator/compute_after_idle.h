// Compute after a wait: a CPU rank that idled before a compute task -- a pipeline stage
// blocked in a receive -- runs it slower than a profile that timed the same work back to back
// (its caches lost the weights, its core's clock dropped). `harness profile layers` measures
// it per layer range (profile.json's after_idle: the range's forward and then backward after
// sleeping each of a few gaps); the engine prices each rank's first forward and first backward
// after an idle stretch by the ratio at that stretch's length (simulator/engine.cpp).
#pragma once

#include <vector>

namespace harness::simulator {

// The slowdown of a forward and a backward after idling, against back to back: the ratio at
// each measured gap, linear between them and from no gap (1) to the first, the last one's
// beyond the last. Empty (no gaps): no slowdown.
struct AfterIdleCurve {
  std::vector<double> gap_s;  // increasing, > 0
  std::vector<double> forward;
  std::vector<double> backward;

  bool empty() const { return gap_s.empty(); }
  double ratio(double idle_s, bool backward_pass) const;
};

// From a profile's medians at each gap (milliseconds, gap 0 first: the back-to-back baseline).
// A ratio below 1 is taken as 1: idling does not warm a host, and the layer times the curve
// scales were themselves measured back to back, so a faster pass after a gap is the
// measurement's noise. Throws std::invalid_argument on fewer than two gaps, a first gap that is
// not 0, gaps out of order, or a time that is not positive.
AfterIdleCurve after_idle_curve(const std::vector<double>& gap_ms,
                                const std::vector<double>& forward_ms,
                                const std::vector<double>& backward_ms);

// A weighted mean of curves (a task over layers measured in different ranges): the forward
// ratios weighted by `forward_weights` (the layers' forward seconds), the backward ones by
// theirs, at every gap of any curve (exact: a sum of piecewise-linear curves is linear between
// their joint breakpoints). Curves with zero weight or no gaps count as ratio 1.
AfterIdleCurve mix_after_idle(const std::vector<const AfterIdleCurve*>& curves,
                              const std::vector<double>& forward_weights,
                              const std::vector<double>& backward_weights);

}  // namespace harness::simulator
