// Change points of a series by E-divisive means with a Student t-test for significance, the
// method of Apache Otava (formerly Hunter; Fleming et al., "Hunter: Using Change Point
// Detection to Hunt for Performance Regressions", ICPE 2023), on Matteson and James's E-divisive
// (arXiv:1306.4933). Deterministic: no permutation test, no random numbers.
//
// Split: windows of `window` points, each starting half a window after the last (or at the last
// change point found in it), are divided recursively at the point that maximises Q-hat, the
// scaled energy distance between the points before and after it, as long as the two sides of
// the division differ by a t-test at 10 times `max_pvalue` ("weak" change points). Merge: over
// the whole series, each weak point is tested again between its neighbours, and the weakest
// (the largest p-value, or where every p-value passes, the smallest relative change when that is
// below `min_magnitude`) is removed, its neighbours retested, until every one passes both.
//
// One deliberate difference from otava 0.8.0 (otava.analysis.merge): when a point is removed,
// this retests both points beside it, where otava retests the one after it and the one after
// that, leaving the point before it with the p-value of an interval it no longer ends.
// MergeRetest::otava_0_8 does as otava does; tests/harness/history/otava_peer.py shows the two
// agree on every test series that way, and names the series where the default answers otherwise.
#pragma once

#include <cstddef>
#include <vector>

namespace harness {

enum class MergeRetest {
  neighbours,  // the points before and after the one removed (whose intervals changed)
  otava_0_8,   // the point after it and the one after that, as otava 0.8.0
};

struct ChangePointOptions {
  size_t window = 50;         // Otava's window_len (>= 2)
  double max_pvalue = 0.001;  // Otava's max_pvalue
  double min_magnitude = 0;   // Otava's min_magnitude: a relative change, 0.05 for 5%
  MergeRetest retest = MergeRetest::neighbours;
};

struct ChangePoint {
  size_t index = 0;   // the first point after the change
  double qhat = 0;    // its E-divisive statistic when it was found
  double pvalue = 1;  // of the t-test between its neighbours' intervals
  double mean_before = 0, mean_after = 0;
  double stddev_before = 0, stddev_after = 0;  // population standard deviations, as Otava's
  // max(|after/before - 1|, |before/after - 1|), 0 when a mean is 0: Otava's magnitude.
  double magnitude() const;
};

// The best division of series[begin, end) (end - begin >= 2): the index tau in (begin, end) and
// Q-hat maximised over tau and the end kappa of the second part, tau < kappa <= end.
struct Candidate {
  size_t index = 0;
  double qhat = 0;
};
Candidate best_division(const std::vector<double>& series, size_t begin, size_t end);

// Q-hat of X = series[begin, tau) against Y = series[tau, kappa) (Matteson and James, eq. 5):
// 2/(n+m) sum|X-Y| - 2m/((n+m)(n-1)) sum_{i<k}|X_i-X_k| - 2n/((n+m)(m-1)) sum_{j<k}|Y_j-Y_k|,
// a term with one point (n or m = 1) being 0. For tests: best_division computes all at once.
double q_hat(const std::vector<double>& series, size_t begin, size_t tau, size_t kappa);

// The change points of `series`, by index. Fewer than 3 points have none.
std::vector<ChangePoint> change_points(const std::vector<double>& series,
                                       const ChangePointOptions& options);

}  // namespace harness
