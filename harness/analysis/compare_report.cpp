#include "harness/analysis/compare_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/text_util.h"

namespace harness {
namespace {

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

// Enough digits for milliseconds and nanoseconds alike, without exponent notation.
std::string format_value(double value) {
  return format(std::abs(value) >= 1000 ? "%.1f" : "%.4g", value);
}

std::string format_p(double p) { return format(p < 0.001 ? "%.2e" : "%.3f", p); }

// "+3.1% [-1.2, +7.5]", or "+3.1%" where the runs allow no interval.
std::string change_with_interval(const CompareRow& row) {
  return row.shift
             ? format_change_with_interval(row.change_pct, row.change_low_pct, row.change_high_pct)
             : format_signed_percent(row.change_pct);
}

std::string row_place(const Comparison& c, const std::string& group, const std::string& name,
                      const std::string& item) {
  if (c.source == "gbench") return name;
  return (group.empty() ? "" : group + " / ") + name + (item.empty() ? "" : " / " + item);
}

std::string gated_items_text(const CompareOptions& options) {
  if (options.gated_items.empty()) return "every row";
  std::string text;
  for (const auto& item : options.gated_items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// The interval's confidence as printed in the table's heading: the first judged row's (all rows
// with the same numbers of runs share it).
std::string confidence_text(const Comparison& c) {
  for (const auto& row : c.rows) {
    if (row.shift) return format("%.1f%%", row.shift->confidence * 100);
  }
  return format("%.0f%%", (1 - c.options.alpha) * 100);
}

void render_rows(const Comparison& c, std::ostream& out) {
  const bool gbench = c.source == "gbench";
  const std::string metric = c.options.metric + " (" + c.unit + ")";
  out << (gbench ? "| benchmark |" : "| point | system | phase |")
      << " runs base | runs new | base " << metric << " | new " << metric << " | change ["
      << confidence_text(c) << " interval] | p (U over runs) | verdict |\n"
      << (gbench ? "|---|" : "|---|---|---|") << "---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& row : c.rows) {
    out << "| " << (gbench ? row.name : row.group + " | " + row.name + " | " + row.item) << " | "
        << row.runs_base << " | " << row.runs_new << " | ";
    if (row.verdict == Verdict::not_compared) {
      out << "— | — | — | — | not compared |\n";
      continue;
    }
    const std::string verdict = verdict_name(row.verdict);
    out << format_value(row.base_value) << " | " << format_value(row.new_value) << " | "
        << change_with_interval(row) << " | " << format_p(row.test.p_value) << " | "
        << (row.verdict == Verdict::regression ? "**" + verdict + "**" : verdict)
        << (row.warnings.empty() ? "" : " ⚠") << " |\n";
  }
}

void render_counters(const Comparison& c, std::ostream& out) {
  if (c.counters.empty()) return;
  size_t equal = 0;
  for (const auto& row : c.counters) equal += row.verdict == Verdict::no_change;
  out << "\nExact counters (per iteration; parameters, gradients and optimizer state per rank; "
         "peak resident memory within "
      << format_number(c.options.memory_tolerance_pct) << "%): " << equal << " of "
      << c.counters.size() << " equal.\n";
  if (equal == c.counters.size()) return;
  out << "\n| point | system | counter | base | new | change | verdict |\n"
      << "|---|---|---|---:|---:|---:|---|\n";
  for (const auto& row : c.counters) {
    if (row.verdict == Verdict::no_change) continue;
    const std::string verdict = verdict_name(row.verdict);
    out << "| " << row.group << " | " << row.name << " | " << row.counter << " | " << row.base_text
        << " | " << row.new_text << " | "
        << (row.verdict == Verdict::changed ? "—" : format("%+.2f%%", row.change_pct)) << " | "
        << (row.verdict == Verdict::regression ? "**" + verdict + "**" : verdict) << " |\n";
  }
}

void render_warnings(const Comparison& c, std::ostream& out) {
  bool any = !c.only_in_base.empty() || !c.only_in_new.empty();
  for (const auto& row : c.rows) any |= !row.warnings.empty();
  if (!any) return;
  out << "\nWarnings:\n";
  for (const auto& row : c.rows) {
    for (const auto& warning : row.warnings) {
      out << "- " << row_place(c, row.group, row.name, row.item) << ": " << warning << "\n";
    }
  }
  for (const auto& key : c.only_in_base) out << "- only in base: " << key << "\n";
  for (const auto& key : c.only_in_new) out << "- only in new: " << key << "\n";
}

size_t count_rows(const Comparison& c, Verdict verdict) {
  return static_cast<size_t>(std::count_if(
      c.rows.begin(), c.rows.end(), [&](const CompareRow& r) { return r.verdict == verdict; }));
}

// The fewest runs any judged row rests on, per side.
std::string runs_text(const Comparison& c) {
  size_t base = 0, candidate = 0;
  bool any = false;
  for (const auto& row : c.rows) {
    if (!row.gated || row.verdict == Verdict::not_compared) continue;
    base = any ? std::min(base, row.runs_base) : row.runs_base;
    candidate = any ? std::min(candidate, row.runs_new) : row.runs_new;
    any = true;
  }
  if (!any) return "no judged row";
  return gated_items_text(c.options) + " judged on " + std::to_string(base) +
         " run(s) (base) and " + std::to_string(candidate) + " run(s) (new)";
}

}  // namespace

std::string verdict_line(const Comparison& c) {
  const size_t counter_regressions = static_cast<size_t>(
      std::count_if(c.counters.begin(), c.counters.end(),
                    [](const CounterRow& r) { return r.verdict == Verdict::regression; }));
  const size_t regressions = count_rows(c, Verdict::regression);
  const std::string threshold = format_number(c.options.threshold_pct) + "%";
  if (regressions + counter_regressions > 0) {
    return "regression: " + std::to_string(regressions) + " row(s) whose interval lies beyond +" +
           threshold + ", " + std::to_string(counter_regressions) + " exact counter(s) grown; " +
           runs_text(c);
  }
  const size_t unresolved = count_rows(c, Verdict::unresolved);
  if (comparison_exit_code(c) == kInconclusiveExitCode && unresolved == 0) {
    return "inconclusive: too few runs for a verdict on a judged row (at least " +
           std::to_string(fewest_runs_for_interval(c.options.alpha)) + " a side); " + runs_text(c);
  }
  if (unresolved > 0) {
    return "inconclusive: " + std::to_string(unresolved) +
           " judged row(s) unresolved (the interval reaches across +-" + threshold +
           "; more runs would tell: harness ab --until-resolved); " + runs_text(c);
  }
  return "no regression: " + runs_text(c);
}

std::string render_comparison_markdown(const Comparison& c) {
  const bool gbench = c.source == "gbench";
  std::ostringstream out;
  out << "# compare: " << c.base_label << " -> " << c.new_label << "\n\n";
  for (const auto& note : c.notes) out << "Note: " << note << "\n\n";
  out << "Each " << (gbench ? "repetition" : "run (one launch of the ranks)")
      << " gives one value, the " << c.options.metric << " of its "
      << (gbench ? "iterations (real_time)" : "iterations pooled over its ranks")
      << "; iterations of one process are not independent samples, runs are. Change = "
         "exp(Hodges-Lehmann shift of the runs' logarithms) - 1 (the median of the pairwise "
         "differences log new - log base; a factor, as a slower phase of the machine stretches "
         "every run), with its distribution-free interval; p = two-sided Mann-Whitney U over "
         "runs. A judged row ("
      << gated_items_text(c.options) << ") is a regression (improvement) only when its whole "
      << "interval lies beyond +" << format_number(c.options.threshold_pct) << "% (-"
      << format_number(c.options.threshold_pct) << "%)";
  if (c.options.noise_floor > 0) {
    out << " and beyond the noise floor of " << format_number(c.options.noise_floor) << " "
        << c.unit;
  }
  out << ".\n\n";
  render_rows(c, out);
  render_counters(c, out);
  render_warnings(c, out);
  out << "\n" << verdict_line(c) << "\n";
  return out.str();
}

nlohmann::json comparison_to_json(const Comparison& c) {
  nlohmann::json out;
  out["base"] = c.base_label;
  out["new"] = c.new_label;
  out["source"] = c.source;
  out["unit"] = c.unit;
  out["metric"] = c.options.metric;
  out["threshold_pct"] = c.options.threshold_pct;
  out["alpha"] = c.options.alpha;
  out["noise_floor"] = c.options.noise_floor;
  out["judged"] =
      std::vector<std::string>(c.options.gated_items.begin(), c.options.gated_items.end());
  out["statistic"] =
      "one value per run (the metric of its iterations); Hodges-Lehmann shift of the runs' "
      "logarithms (of the values where one is <= 0: scale) with its distribution-free interval; "
      "two-sided Mann-Whitney U over runs";
  out["notes"] = c.notes;
  out["rows"] = nlohmann::json::array();
  for (const auto& row : c.rows) {
    nlohmann::json r = {{"runs_base", row.runs_base},
                        {"runs_new", row.runs_new},
                        {"iterations_base", row.iterations_base},
                        {"iterations_new", row.iterations_new},
                        {"judged", row.gated},
                        {"verdict", verdict_name(row.verdict)},
                        {"warnings", row.warnings}};
    if (c.source == "gbench") {
      r["name"] = row.name;
    } else {
      r["point"] = row.group;
      r["system"] = row.name;
      r["phase"] = row.item;
    }
    if (row.verdict != Verdict::not_compared) {
      r["base"] = row.base_value;
      r["new"] = row.new_value;
      r["change_pct"] = row.change_pct;
      r["u_new"] = row.test.u2;
      r["p_value"] = row.test.p_value;
      r["exact"] = row.test.exact;
    }
    if (row.shift) {
      r["change_low_pct"] = row.change_low_pct;
      r["change_high_pct"] = row.change_high_pct;
      r["confidence"] = row.shift->confidence;
      r["scale"] = row.log_scale ? "log" : "linear";
    }
    out["rows"].push_back(std::move(r));
  }
  out["counters"] = nlohmann::json::array();
  for (const auto& row : c.counters) {
    out["counters"].push_back({{"point", row.group},
                               {"system", row.name},
                               {"counter", row.counter},
                               {"base", row.base_text},
                               {"new", row.new_text},
                               {"change_pct", row.change_pct},
                               {"verdict", verdict_name(row.verdict)}});
  }
  out["only_in_base"] = c.only_in_base;
  out["only_in_new"] = c.only_in_new;
  out["regression"] = has_regression(c);
  out["exit_code"] = comparison_exit_code(c);
  out["verdict"] = verdict_line(c);
  return out;
}

}  // namespace harness
