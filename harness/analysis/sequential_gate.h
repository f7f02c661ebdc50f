// `harness ab --until-resolved`: more rounds while a judged row is unresolved, without the extra
// looks inflating the false-alarm rate. The rounds are looked at on a schedule fixed before the
// first one runs (the first --rounds, then doubling, up to --max-rounds), and alpha is spent over
// those looks (Bonferroni: alpha / K at each of K looks). A no-change row is called a regression
// at a look with probability at most (alpha / K) / 2, so over all looks at most alpha / 2, as for
// one comparison at alpha (harness/analysis/compare_samples.h), however the looks' verdicts
// correlate. It costs width: each look's interval is at the stricter level.
#pragma once

#include <optional>
#include <vector>

#include "harness/analysis/compare_samples.h"

namespace harness {

// The rounds after which the comparison is looked at: first, 2 first, 4 first, ..., each below
// max_rounds, then max_rounds. first >= 1, max_rounds >= first.
std::vector<long long> look_schedule(long long first_rounds, long long max_rounds);

// Each look's level when alpha is spent evenly over `looks` looks.
double alpha_per_look(double alpha, size_t looks);

// Whether a judged timing row is still undecided (unresolved, or too few runs for an interval).
bool has_undecided_row(const Comparison& comparison);

// The runs a side that an undecided row would need for a verdict, were its change and spread what
// they are now: its interval's half-width shrinks as 1/sqrt(runs), and a verdict needs it below
// the distance from the change to the nearer of +-threshold. Nothing without an interval, or
// when the change sits on a threshold.
std::optional<long long> runs_needed(const CompareRow& row, double threshold_pct);

}  // namespace harness
