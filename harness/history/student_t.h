// Student's t-test of two independent samples with a pooled variance, from their summaries (the
// form of scipy.stats.ttest_ind_from_stats with equal_var=True), and the distribution function
// it needs. Pure functions: the change-point detector's significance test.
#pragma once

#include <cstddef>

namespace harness {

// The regularized incomplete beta function I_x(a, b), a, b > 0, x in [0, 1] (continued fraction,
// modified Lentz; accurate to about 1e-14).
double regularized_incomplete_beta(double a, double b, double x);

// P(|T| >= |t|) for T with `degrees_of_freedom` > 0: 1 for t = 0, 0 for an infinite t.
double student_t_two_sided_p(double t, double degrees_of_freedom);

struct SampleMoments {
  double mean = 0;
  double stddev = 0;  // as given: the caller says which (Otava gives the population's)
  size_t count = 0;
};

// The two-sided p-value of "equal means" with the pooled variance
// ((n1 - 1) s1^2 + (n2 - 1) s2^2) / (n1 + n2 - 2). 1 when n1 + n2 <= 2 (no degrees of freedom)
// or when both samples are constant and equal (t = 0/0); 0 when they are constant and differ.
double pooled_t_test_p(const SampleMoments& left, const SampleMoments& right);

}  // namespace harness
