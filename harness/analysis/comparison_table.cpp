#include "harness/analysis/comparison_table.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/text_util.h"

namespace harness {
namespace {

double statistic(const SampleSummary& s, const std::string& name) {
  if (name == "mean") return s.mean;
  if (name == "p50") return s.p50;
  if (name == "p90") return s.p90;
  if (name == "p95") return s.p95;
  return s.p99;
}

// The fraction of the samples at or below a statistic; nullopt for the mean.
std::optional<double> percentile_fraction(const std::string& name) {
  if (name == "p50") return 0.50;
  if (name == "p90") return 0.90;
  if (name == "p95") return 0.95;
  if (name == "p99") return 0.99;
  return std::nullopt;
}

std::string signed_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%+.*f", decimals, value);
  return buffer;
}

const SampleSummary* find_phase(const SystemSummary& system, const std::string& phase) {
  auto it = system.phases.find(phase);
  return it == system.phases.end() ? nullptr : &it->second;
}

const SystemSummary* find_system(const PointSummary& point, const std::string& name) {
  for (const auto& system : point.systems) {
    if (system.name == name) return &system;
  }
  return nullptr;
}

std::optional<double> baseline_value(const PointSummary& point, const std::string& baseline,
                                     const std::string& phase, const std::string& stat) {
  const SystemSummary* base = find_system(point, baseline);
  const SampleSummary* stats = base ? find_phase(*base, phase) : nullptr;
  if (!stats) return std::nullopt;
  return statistic(*stats, stat);
}

}  // namespace

bool percentile_too_few_samples(const std::string& statistic, size_t samples) {
  const auto fraction = percentile_fraction(statistic);
  // n (1 - q) < 1, in integer percent so that n = 100 at p99 is enough and 99 is not.
  return fraction && static_cast<double>(samples) * (100 - std::lround(*fraction * 100)) < 100;
}

std::optional<double> delta_percent(double value, std::optional<double> baseline) {
  if (!baseline || *baseline == 0) return std::nullopt;
  return (value - *baseline) / *baseline * 100.0;
}

std::string render_markdown_tables(const RunSummary& summary) {
  const std::string& baseline = summary.manifest.baseline;
  std::ostringstream out;
  out << "# " << summary.manifest.experiment << "\n\n"
      << "Latency in ms. n = samples per system, pooled over ranks and repeats (warm-up "
         "excluded); percentiles by linear interpolation. delta% is against the baseline, "
      << baseline << ".\n";
  bool any_marked = false;
  for (const auto& point : summary.points) {
    for (const char* phase : kPhases) {
      out << "\n## " << point.point.label << " | " << phase << "\n\n| system | n |";
      for (const char* stat : kTableStatistics) out << " " << stat << " | delta% |";
      out << "\n|---|---:|";
      for (size_t i = 0; i < std::size(kTableStatistics); ++i) out << "---:|---:|";
      out << "\n";
      for (const auto& system : point.systems) {
        out << "| " << system.name << (system.name == baseline ? " (baseline)" : "") << " | ";
        const SampleSummary* stats = find_phase(system, phase);
        if (!stats) {
          // A system whose runs completed without this phase (an external program that times
          // only its iterations) did not fail: the table says which of the two it is.
          const char* why = system.complete_runs > 0 ? "not reported" : "failed";
          out << "0 |";
          for (size_t i = 0; i < std::size(kTableStatistics); ++i) out << " " << why << " | |";
          out << "\n";
          continue;
        }
        out << stats->count << " |";
        for (const char* stat : kTableStatistics) {
          const double value = statistic(*stats, stat);
          const char* mark = percentile_too_few_samples(stat, stats->count) ? kFewSamplesMark : "";
          if (*mark) any_marked = true;
          out << " " << format_fixed(value, 2) << mark << " | ";
          if (system.name == baseline) {
            out << "— |";
          } else if (auto delta =
                         delta_percent(value, baseline_value(point, baseline, phase, stat))) {
            out << signed_fixed(*delta, 1) << mark << " |";
          } else {
            out << "n/a |";
          }
        }
        out << "\n";
      }
    }
  }
  if (any_marked) out << "\n" << kFewSamplesLegend << "\n";
  return out.str();
}

std::string render_csv_table(const RunSummary& summary) {
  const std::string& baseline = summary.manifest.baseline;
  std::ostringstream out;
  out << "point_id,point,phase,system,is_baseline,n";
  for (const char* stat : kTableStatistics) out << "," << stat << "_ms," << stat << "_delta_pct";
  out << "\n";
  for (const auto& point : summary.points) {
    for (const char* phase : kPhases) {
      for (const auto& system : point.systems) {
        const SampleSummary* stats = find_phase(system, phase);
        out << point.point.id << ",\"" << point.point.label << "\"," << phase << "," << system.name
            << "," << (system.name == baseline ? 1 : 0) << "," << (stats ? stats->count : 0);
        for (const char* stat : kTableStatistics) {
          if (!stats) {
            out << ",,";
            continue;
          }
          const double value = statistic(*stats, stat);
          out << "," << format_fixed(value, 4) << ",";
          if (system.name != baseline) {
            if (auto delta = delta_percent(value, baseline_value(point, baseline, phase, stat))) {
              out << format_fixed(*delta, 3);
            }
          }
        }
        out << "\n";
      }
    }
  }
  return out.str();
}

}  // namespace harness
