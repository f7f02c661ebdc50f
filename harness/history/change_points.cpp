#include "harness/history/change_points.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "harness/history/student_t.h"

namespace harness {

namespace {

// Sums of |x_i - x_j| over rectangles of index pairs of series[begin, end), from a prefix table
// P[a][b] = sum over i < a, j < b (local indices): every sum Q-hat needs in O(1).
class PairDistances {
 public:
  PairDistances(const std::vector<double>& series, size_t begin, size_t end)
      : begin_(begin), size_(end - begin), prefix_((size_ + 1) * (size_ + 1), 0.0) {
    for (size_t i = 0; i < size_; ++i) {
      double row = 0;
      for (size_t j = 0; j < size_; ++j) {
        row += std::fabs(series[begin + i] - series[begin + j]);
        at(i + 1, j + 1) = at(i, j + 1) + row;
      }
    }
  }
  // Sum over i in [a, b), j in [c, d), global indices.
  double rectangle(size_t a, size_t b, size_t c, size_t d) const {
    a -= begin_, b -= begin_, c -= begin_, d -= begin_;
    return get(b, d) - get(a, d) - get(b, c) + get(a, c);
  }
  // Sum over the pairs i < k of [a, b).
  double within(size_t a, size_t b) const { return rectangle(a, b, a, b) / 2; }

 private:
  double& at(size_t a, size_t b) { return prefix_[a * (size_ + 1) + b]; }
  double get(size_t a, size_t b) const { return prefix_[a * (size_ + 1) + b]; }
  size_t begin_, size_;
  std::vector<double> prefix_;
};

double q_hat_of(const PairDistances& distances, size_t begin, size_t tau, size_t kappa) {
  const double n = double(tau - begin), m = double(kappa - tau);
  double q = 2 / (n + m) * distances.rectangle(begin, tau, tau, kappa);
  if (n > 1) q -= 2 * m / ((n + m) * (n - 1)) * distances.within(begin, tau);
  if (m > 1) q -= 2 * n / ((n + m) * (m - 1)) * distances.within(tau, kappa);
  return q;
}

SampleMoments moments(const std::vector<double>& series, size_t begin, size_t end) {
  SampleMoments result;
  result.count = end - begin;
  result.mean =
      std::accumulate(series.begin() + begin, series.begin() + end, 0.0) / double(result.count);
  if (result.count < 2) return result;
  double squares = 0;
  for (size_t i = begin; i < end; ++i) {
    squares += (series[i] - result.mean) * (series[i] - result.mean);
  }
  result.stddev = std::sqrt(squares / double(result.count));  // numpy.std: the population's
  return result;
}

// The t-test of series[low, index) against series[index, high).
ChangePoint tested(const std::vector<double>& series, size_t low, size_t index, size_t high,
                   double qhat) {
  const SampleMoments before = moments(series, low, index), after = moments(series, index, high);
  ChangePoint point;
  point.index = index;
  point.qhat = qhat;
  point.pvalue = pooled_t_test_p(before, after);
  point.mean_before = before.mean;
  point.mean_after = after.mean;
  point.stddev_before = before.stddev;
  point.stddev_after = after.stddev;
  return point;
}

// points[k] tested between its neighbours (or the series' ends).
void retest(const std::vector<double>& series, std::vector<ChangePoint>& points, size_t k) {
  const size_t low = k == 0 ? 0 : points[k - 1].index;
  const size_t high = k + 1 == points.size() ? series.size() : points[k + 1].index;
  points[k] = tested(series, low, points[k].index, high, points[k].qhat);
}

// E-divisive on series[begin, end): the interval (between the points found so far) whose best
// division has the largest Q-hat is divided while that division passes the t-test at
// `max_pvalue` (p <= max_pvalue, as Otava's split step).
std::vector<ChangePoint> divide_window(const std::vector<double>& series, size_t begin, size_t end,
                                       double max_pvalue) {
  std::vector<ChangePoint> points;
  while (true) {
    std::vector<size_t> bounds{begin};
    for (const ChangePoint& point : points) bounds.push_back(point.index);
    bounds.push_back(end);
    bool found = false;
    Candidate best;
    size_t low = 0, high = 0;
    for (size_t k = 0; k + 1 < bounds.size(); ++k) {
      if (bounds[k + 1] - bounds[k] < 2) continue;
      const Candidate candidate = best_division(series, bounds[k], bounds[k + 1]);
      if (!found || candidate.qhat > best.qhat) {
        best = candidate, low = bounds[k], high = bounds[k + 1], found = true;
      }
    }
    if (!found) break;
    const ChangePoint point = tested(series, low, best.index, high, best.qhat);
    if (!(point.pvalue <= max_pvalue)) break;
    points.insert(
        std::upper_bound(points.begin(), points.end(), point.index,
                         [](size_t index, const ChangePoint& p) { return index < p.index; }),
        point);
  }
  return points;
}

// Otava's first pass takes a 10 times looser level below 0.05, twice as loose below 0.5.
double first_pass_pvalue(double max_pvalue) {
  if (max_pvalue < 0.05) return max_pvalue * 10;
  if (max_pvalue < 0.5) return max_pvalue * 2;
  return max_pvalue;
}

std::vector<ChangePoint> weak_change_points(const std::vector<double>& series,
                                            const ChangePointOptions& options) {
  const double level = first_pass_pvalue(options.max_pvalue);
  const size_t step = options.window / 2;
  std::vector<ChangePoint> points;
  for (size_t start = 0; start < series.size();) {
    const size_t end = std::min(start + options.window, series.size());
    const std::vector<ChangePoint> found = divide_window(series, start, end, level);
    for (const ChangePoint& point : found) {
      const bool known = std::any_of(points.begin(), points.end(),
                                     [&](const ChangePoint& p) { return p.index == point.index; });
      if (!known) points.push_back(point);
    }
    start = std::max(found.empty() ? 0 : found.back().index, start + step);
  }
  std::sort(points.begin(), points.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  for (size_t k = 0; k < points.size(); ++k) retest(series, points, k);
  return points;
}

// The merge step: removes the weakest point until every one passes (p < max_pvalue, strictly,
// as Otava's merge) and changes by more than min_magnitude.
void merge_weak_points(const std::vector<double>& series, std::vector<ChangePoint>& points,
                       const ChangePointOptions& options) {
  while (!points.empty()) {
    auto weakest = std::max_element(
        points.begin(), points.end(),
        [](const ChangePoint& a, const ChangePoint& b) { return a.pvalue < b.pvalue; });
    if (weakest->pvalue < options.max_pvalue) {
      weakest = std::min_element(
          points.begin(), points.end(),
          [](const ChangePoint& a, const ChangePoint& b) { return a.magnitude() < b.magnitude(); });
      if (weakest->magnitude() > options.min_magnitude) return;
    }
    const size_t removed = size_t(weakest - points.begin());
    points.erase(weakest);
    if (options.retest == MergeRetest::neighbours) {
      if (removed > 0) retest(series, points, removed - 1);
      if (removed < points.size()) retest(series, points, removed);
    } else {
      if (removed < points.size()) retest(series, points, removed);
      if (removed + 1 < points.size()) retest(series, points, removed + 1);
    }
  }
}

}  // namespace

double ChangePoint::magnitude() const {
  const double forward = mean_before == 0 ? 0 : mean_after / mean_before - 1;
  const double backward = mean_after == 0 ? 0 : mean_before / mean_after - 1;
  return std::max(std::fabs(forward), std::fabs(backward));
}

double q_hat(const std::vector<double>& series, size_t begin, size_t tau, size_t kappa) {
  return q_hat_of(PairDistances(series, begin, kappa), begin, tau, kappa);
}

Candidate best_division(const std::vector<double>& series, size_t begin, size_t end) {
  const PairDistances distances(series, begin, end);
  Candidate best{begin + 1, q_hat_of(distances, begin, begin + 1, begin + 2)};
  // Row by row (tau), then kappa: the first of equal maxima wins, as numpy.argmax's.
  for (size_t tau = begin + 1; tau < end; ++tau) {
    for (size_t kappa = tau + 1; kappa <= end; ++kappa) {
      const double q = q_hat_of(distances, begin, tau, kappa);
      if (q > best.qhat) best = {tau, q};
    }
  }
  return best;
}

std::vector<ChangePoint> change_points(const std::vector<double>& series,
                                       const ChangePointOptions& options) {
  if (series.size() < 3) return {};
  std::vector<ChangePoint> points = weak_change_points(series, options);
  merge_weak_points(series, points, options);
  return points;
}

}  // namespace harness
