#include "harness/analysis/compare_counters.h"

#include <cmath>
#include <cstdio>

namespace harness {
namespace {

const RunCounter* find_counter(const std::vector<CounterSet>& sets, const CounterSet& like,
                               const std::string& counter) {
  for (const auto& set : sets) {
    if (set.group != like.group || set.name != like.name) continue;
    for (const auto& c : set.counters) {
      if (c.name == counter) return &c;
    }
  }
  return nullptr;
}

// Counters are integers (bytes, counts, FLOPs) held in doubles: printed whole.
std::string whole_number(double value) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.0f", value);
  return buffer;
}

CounterRow counter_row(const CounterSet& set, const RunCounter& base, const RunCounter& candidate,
                       double memory_tolerance_pct) {
  CounterRow row{set.group, set.name, base.name, "", "", 0, Verdict::no_change};
  if (base.kind == CounterKind::layout) {
    row.base_text = base.layout;
    row.new_text = candidate.layout;
    row.verdict = base.layout == candidate.layout ? Verdict::no_change : Verdict::changed;
    return row;
  }
  row.base_text = whole_number(base.value);
  row.new_text = whole_number(candidate.value);
  row.change_pct = base.value != 0 ? (candidate.value - base.value) / base.value * 100.0
                                   : (candidate.value != 0 ? 100.0 : 0.0);
  const double tolerance = base.kind == CounterKind::measured ? memory_tolerance_pct : 0.0;
  if (candidate.value > base.value && std::abs(row.change_pct) > tolerance) {
    row.verdict = Verdict::regression;
  } else if (candidate.value < base.value && std::abs(row.change_pct) > tolerance) {
    row.verdict = Verdict::improvement;
  }
  return row;
}

}  // namespace

std::vector<CounterRow> compare_counters(const std::vector<CounterSet>& base,
                                         const std::vector<CounterSet>& candidate,
                                         double memory_tolerance_pct) {
  std::vector<CounterRow> rows;
  for (const auto& set : base) {
    for (const auto& counter : set.counters) {
      const RunCounter* other = find_counter(candidate, set, counter.name);
      if (other) rows.push_back(counter_row(set, counter, *other, memory_tolerance_pct));
    }
  }
  return rows;
}

}  // namespace harness
