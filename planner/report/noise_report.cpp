#include "planner/report/noise_report.h"

#include <cmath>
#include <sstream>

#include "planner/report/plan_report.h"

namespace harness::planner {
namespace {

std::string plan_text(const std::optional<PipelineCandidate>& plan) {
  return plan ? describe_stages(*plan) : std::string("-");
}

// Percentages print without trailing zeros: 10, 2.5.
std::string percent(double fraction) {
  std::ostringstream out;
  out << fraction * 100.0;
  return out.str();
}

nlohmann::json number_or_null(double value) {
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

}  // namespace

std::string noise_study_name(const NoiseSettings& settings) {
  return "noise_c" + percent(settings.compute_fraction) + "_b" +
         percent(settings.bandwidth_fraction);
}

void write_noise_table(std::ostream& out, const NoiseStudy& study) {
  const NoiseSettings& s = study.settings;
  out << "# noise: compute +-" << percent(s.compute_fraction) << "%, bandwidth +-"
      << percent(s.bandwidth_fraction) << "%, seeds " << s.first_seed << ".."
      << s.first_seed + s.seeds - 1 << "; ratio = noisy plan on true inputs / true best\n";
  out << "gbs, true_best, ratio_mean, ratio_min, ratio_max, plans_changed | true plan\n";
  for (const NoisyBatch& b : study.batches) {
    out << b.global_batch << ", " << format_speedup(b.true_best) << ", "
        << format_speedup(b.mean_ratio) << ", " << format_speedup(b.min_ratio) << ", "
        << format_speedup(b.max_ratio) << ", " << b.plans_changed << "/" << b.seeds.size() << " | "
        << plan_text(b.true_plan) << '\n';
  }
}

void write_noise_csv(std::ostream& out, const NoiseStudy& study) {
  out << "gbs,true_best,ratio_mean,ratio_min,ratio_max,plans_changed,seeds,true_plan\n";
  for (const NoisyBatch& b : study.batches) {
    out << b.global_batch << ',' << format_speedup(b.true_best) << ','
        << format_speedup(b.mean_ratio) << ',' << format_speedup(b.min_ratio) << ','
        << format_speedup(b.max_ratio) << ',' << b.plans_changed << ',' << b.seeds.size() << ','
        << plan_text(b.true_plan) << '\n';
  }
}

nlohmann::json noise_json(const NoiseStudy& study) {
  const NoiseSettings& s = study.settings;
  nlohmann::json results = nlohmann::json::array();
  for (const NoisyBatch& b : study.batches) {
    nlohmann::json seeds = nlohmann::json::array();
    for (const NoisySeed& seed : b.seeds) {
      seeds.push_back({{"seed", seed.seed},
                       {"plan", plan_text(seed.plan)},
                       {"noisy_speedup", seed.noisy_speedup},
                       {"true_speedup", seed.true_speedup},
                       {"ratio", number_or_null(seed.ratio)}});
    }
    results.push_back({{"global_batch_size", b.global_batch},
                       {"true_plan", plan_text(b.true_plan)},
                       {"true_best", b.true_best},
                       {"ratio_mean", number_or_null(b.mean_ratio)},
                       {"ratio_min", number_or_null(b.min_ratio)},
                       {"ratio_max", number_or_null(b.max_ratio)},
                       {"plans_changed", b.plans_changed},
                       {"seeds", seeds}});
  }
  return {{"schema", "harness.plan-noise/1"},
          {"compute_noise_fraction", s.compute_fraction},
          {"bandwidth_noise_fraction", s.bandwidth_fraction},
          {"first_seed", s.first_seed},
          {"seeds", s.seeds},
          {"results", results}};
}

}  // namespace harness::planner
