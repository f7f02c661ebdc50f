#include "harness/analysis/compare_samples.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "common/input_error.h"
#include "common/statistics.h"
#include "common/text_util.h"

namespace harness {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;

std::string describe(const Key& key) {
  const auto& [group, name, item] = key;
  return (group.empty() ? "" : group + " / ") + name + " / " + item;
}

double metric_value(const std::vector<double>& samples, const std::string& metric) {
  if (metric == "mean") return summarize(samples).mean;
  return percentile(samples, 50);
}

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

}  // namespace

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::regression:
      return "regression";
    case Verdict::improvement:
      return "improvement";
    case Verdict::no_change:
      return "no significant change";
    case Verdict::not_compared:
      break;
  }
  return "not compared";
}

double parse_threshold_percent(const std::string& text) {
  std::string number = text;
  while (!number.empty() && number.back() == ' ') number.pop_back();
  if (!number.empty() && number.back() == '%') number.pop_back();
  try {
    size_t used = 0;
    const double value = std::stod(number, &used);
    if (used == number.size() && value >= 0 && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  throw InputError("--threshold: expected a percentage such as 5% (got '" + text + "')");
}

Comparison compare_sample_sets(const std::vector<SampleSet>& base,
                               const std::vector<SampleSet>& candidate,
                               const CompareOptions& options) {
  if (options.metric != "p50" && options.metric != "mean") {
    throw InputError("--metric: expected p50 or mean (got '" + options.metric + "')");
  }
  if (!(options.alpha > 0 && options.alpha < 1)) {
    throw InputError("--alpha: expected a level in (0, 1)");
  }
  Comparison comparison;
  comparison.options = options;
  std::map<Key, const SampleSet*> by_key;
  for (const auto& set : candidate) by_key[{set.group, set.name, set.item}] = &set;
  std::map<Key, bool> matched;

  for (const auto& set : base) {
    const Key key{set.group, set.name, set.item};
    auto found = by_key.find(key);
    if (found == by_key.end()) {
      comparison.only_in_base.push_back(describe(key));
      continue;
    }
    matched[key] = true;
    const SampleSet& other = *found->second;
    CompareRow row;
    row.group = set.group;
    row.name = set.name;
    row.item = set.item;
    row.n_base = set.samples.size();
    row.n_new = other.samples.size();
    if (row.n_base == 0 || row.n_new == 0) {
      row.warnings.push_back(std::string("no samples in the ") +
                             (row.n_base == 0 ? "base" : "new") + " run (failed or missing)");
      comparison.rows.push_back(std::move(row));
      continue;
    }
    row.base_value = metric_value(set.samples, options.metric);
    row.new_value = metric_value(other.samples, options.metric);
    row.change_pct =
        row.base_value != 0 ? (row.new_value - row.base_value) / row.base_value * 100.0 : 0.0;
    row.test = mann_whitney_u(set.samples, other.samples);
    if (row.n_base < kFewSamples || row.n_new < kFewSamples) {
      row.warnings.push_back("fewer than " + std::to_string(kFewSamples) + " samples (base " +
                             std::to_string(row.n_base) + ", new " + std::to_string(row.n_new) +
                             "): the test has little power");
    }
    const bool significant = row.test.p_value < options.alpha;
    if (significant && row.change_pct > options.threshold_pct) {
      row.verdict = Verdict::regression;
    } else if (significant && row.change_pct < -options.threshold_pct) {
      row.verdict = Verdict::improvement;
    } else {
      row.verdict = Verdict::no_change;
    }
    comparison.rows.push_back(std::move(row));
  }
  for (const auto& set : candidate) {
    const Key key{set.group, set.name, set.item};
    if (!matched.count(key)) comparison.only_in_new.push_back(describe(key));
  }
  if (comparison.rows.empty()) {
    throw InputError("nothing to compare: no point, system and phase (or benchmark) is in both");
  }
  return comparison;
}

bool has_regression(const Comparison& comparison) {
  for (const auto& row : comparison.rows) {
    if (row.verdict == Verdict::regression) return true;
  }
  return false;
}

std::string render_comparison_markdown(const Comparison& c) {
  const bool gbench = c.source == "gbench";
  const std::string metric = c.options.metric + " (" + c.unit + ")";
  std::ostringstream out;
  out << "# compare: " << c.base_label << " -> " << c.new_label << "\n\n"
      << "Metric " << c.options.metric << " of the "
      << (gbench ? "repetitions (real_time)" : "per-iteration samples")
      << "; change = (new - base) "
      << "/ base. Two-sided Mann-Whitney U test (U of the new samples; exact p without ties "
      << "for n1 + n2 <= " << kExactLimit << ", else normal approximation with tie and "
      << "continuity correction). A row is a regression (improvement) when p < "
      << format_number(c.options.alpha) << " and the change exceeds +"
      << format_number(c.options.threshold_pct) << "% (-" << format_number(c.options.threshold_pct)
      << "%).\n\n";
  out << (gbench ? "| benchmark |" : "| point | system | phase |") << " n base | n new | base "
      << metric << " | new " << metric << " | change | U | p | verdict |\n"
      << (gbench ? "|---|" : "|---|---|---|") << "---:|---:|---:|---:|---:|---:|---:|---|\n";
  int regressions = 0;
  for (const auto& row : c.rows) {
    out << "| ";
    if (gbench) {
      out << row.name << " |";
    } else {
      out << row.group << " | " << row.name << " | " << row.item << " |";
    }
    out << " " << row.n_base << " | " << row.n_new << " | ";
    if (row.verdict == Verdict::not_compared) {
      out << "— | — | — | — | — | not compared |\n";
      continue;
    }
    regressions += row.verdict == Verdict::regression;
    out << format_value(row.base_value) << " | " << format_value(row.new_value) << " | "
        << format("%+.1f%%", row.change_pct) << " | " << format_number(row.test.u2, 1) << " | "
        << format_p(row.test.p_value) << (row.test.exact ? " (exact)" : "") << " | "
        << (row.verdict == Verdict::regression ? "**regression**" : verdict_name(row.verdict))
        << (row.warnings.empty() ? "" : " ⚠") << " |\n";
  }
  bool any_warning = false;
  for (const auto& row : c.rows) any_warning |= !row.warnings.empty();
  if (any_warning || !c.only_in_base.empty() || !c.only_in_new.empty()) out << "\nWarnings:\n";
  for (const auto& row : c.rows) {
    for (const auto& warning : row.warnings) {
      out << "- " << (row.group.empty() ? "" : row.group + " / ") << row.name
          << (gbench ? "" : " / " + row.item) << ": " << warning << "\n";
    }
  }
  for (const auto& key : c.only_in_base) out << "- only in base: " << key << "\n";
  for (const auto& key : c.only_in_new) out << "- only in new: " << key << "\n";
  out << "\n"
      << (regressions ? std::to_string(regressions) + " significant regression(s) beyond " +
                            format_number(c.options.threshold_pct) + "%"
                      : std::string("no significant regression"))
      << "\n";
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
  out["test"] =
      "two-sided Mann-Whitney U; exact without ties for n1+n2 <= " + std::to_string(kExactLimit) +
      ", else normal approximation with tie and continuity correction";
  out["rows"] = nlohmann::json::array();
  for (const auto& row : c.rows) {
    nlohmann::json r = {{"name", row.name},
                        {"n_base", row.n_base},
                        {"n_new", row.n_new},
                        {"verdict", verdict_name(row.verdict)},
                        {"warnings", row.warnings}};
    if (c.source != "gbench") {
      r["point"] = row.group;
      r["system"] = row.name;
      r["phase"] = row.item;
      r.erase("name");
    }
    if (row.verdict != Verdict::not_compared) {
      r["base"] = row.base_value;
      r["new"] = row.new_value;
      r["change_pct"] = row.change_pct;
      r["u_base"] = row.test.u1;
      r["u_new"] = row.test.u2;
      r["z"] = row.test.z;
      r["p_value"] = row.test.p_value;
      r["exact"] = row.test.exact;
    }
    out["rows"].push_back(std::move(r));
  }
  out["only_in_base"] = c.only_in_base;
  out["only_in_new"] = c.only_in_new;
  out["regression"] = has_regression(c);
  return out;
}

}  // namespace harness
