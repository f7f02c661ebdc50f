#include "harness/history/student_t.h"

#include <cmath>
#include <limits>

namespace harness {

namespace {

// The continued fraction of I_x(a, b) (Numerical Recipes' betacf form), evaluated by the
// modified Lentz method; converges fast for x < (a + 1) / (a + b + 2).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  constexpr int kMaxTerms = 1000;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double fraction = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double m2 = 2.0 * m;
    // The even step, then the odd one.
    const double even = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + even * d;
    c = 1 + even / c;
    d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
    c = std::fabs(c) < kTiny ? kTiny : c;
    fraction *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + odd * d;
    c = 1 + odd / c;
    d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
    c = std::fabs(c) < kTiny ? kTiny : c;
    const double delta = d * c;
    fraction *= delta;
    if (std::fabs(delta - 1) < kEpsilon) break;
  }
  return fraction;
}

}  // namespace

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  // The fraction converges on the side of the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) nearer 0.
  if (x < (a + 1) / (a + b + 2)) return front * incomplete_beta_fraction(a, b, x) / a;
  return 1 - front * incomplete_beta_fraction(b, a, 1 - x) / b;
}

double student_t_two_sided_p(double t, double degrees_of_freedom) {
  if (std::isinf(t)) return 0;
  if (t == 0) return 1;
  const double x = degrees_of_freedom / (degrees_of_freedom + t * t);
  return regularized_incomplete_beta(degrees_of_freedom / 2, 0.5, x);
}

double pooled_t_test_p(const SampleMoments& left, const SampleMoments& right) {
  const double n1 = double(left.count), n2 = double(right.count);
  const double degrees = n1 + n2 - 2;
  if (degrees <= 0) return 1;
  const double pooled =
      ((n1 - 1) * left.stddev * left.stddev + (n2 - 1) * right.stddev * right.stddev) / degrees;
  const double difference = left.mean - right.mean;
  const double scale = std::sqrt(pooled * (1 / n1 + 1 / n2));
  if (scale == 0) return difference == 0 ? 1 : 0;
  return student_t_two_sided_p(difference / scale, degrees);
}

}  // namespace harness
