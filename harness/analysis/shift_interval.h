// The change between two sets of runs as an estimate with its confidence interval, the
// statistic `harness compare` gives its verdict on.
//
// Hodges-Lehmann: the shift estimate is the median of all n1 n2 pairwise differences
// new_j - base_i; its distribution-free interval (Moses; Hollander & Wolfe, Nonparametric
// Statistical Methods, 4.3) runs from the (C+1)-th smallest to the (C+1)-th largest difference,
// where C is the largest U with P(U <= C) <= alpha / 2 under no change: the exact
// Mann-Whitney null distribution for n1 + n2 <= kExactLimit, else its normal approximation.
// The interval excludes 0 exactly when the two-sided U test rejects at alpha. It needs no
// assumption on the runs' distribution, only that they are independent: one value per process,
// never per iteration.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace harness {

struct ShiftInterval {
  double estimate = 0;  // Hodges-Lehmann shift, new - base, in the samples' unit
  double low = 0;       // the interval's bounds, same unit
  double high = 0;
  double confidence = 0;  // its coverage: exactly 1 - 2 P(U <= C) when exact, else 1 - alpha
  bool exact = false;
};

// The shift estimate alone (the median of the pairwise differences). Both non-empty.
double hodges_lehmann_shift(const std::vector<double>& base, const std::vector<double>& candidate);

// Nothing when the runs are too few for any interval at this level (e.g. 3 against 3 at
// alpha 0.05: the most extreme arrangement has probability 2/20 = 0.1). Both non-empty;
// alpha in (0, 1).
std::optional<ShiftInterval> shift_interval(const std::vector<double>& base,
                                            const std::vector<double>& candidate, double alpha);

// The change from `base` to `candidate` as a percentage of the base, the form every verdict over
// runs or commits takes. Times vary by a factor (a machine in a slower phase stretches every run
// alike), so the shift is taken between the logarithms: a 10% slowdown is the same shift in a
// fast phase and a slow one. Where a side has a value <= 0 there is no logarithm, and the shift is
// the difference over the base's median.
struct RelativeShift {
  double change_pct = 0;
  std::optional<ShiftInterval> shift;  // of the logarithms (log_scale), or in the values' unit
  double low_pct = 0, high_pct = 0;    // the interval as percentages, where `shift` is
  bool log_scale = true;
};
RelativeShift relative_shift(const std::vector<double>& base, const std::vector<double>& candidate,
                             double alpha);

// The fewest runs per side (equal sides) for which shift_interval gives an interval at alpha:
// 4 at 0.05, 5 at 0.01.
size_t fewest_runs_for_interval(double alpha);

}  // namespace harness
