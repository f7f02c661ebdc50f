// Outputs of the noise-sensitivity study: console table, CSV and JSON (per-seed detail).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "planner/study/noise_study.h"

namespace harness::planner {

// "noise_c10_b20" for +-10% compute, +-20% bandwidth: the base name of the study's files.
std::string noise_study_name(const NoiseSettings& settings);

// "gbs, true_best, ratio_mean, ratio_min, ratio_max, plans_changed | true plan", one row per
// batch size; ratio = speedup of the noisy plan on the true inputs / true_best.
void write_noise_table(std::ostream& out, const NoiseStudy& study);
void write_noise_csv(std::ostream& out, const NoiseStudy& study);
nlohmann::json noise_json(const NoiseStudy& study);

}  // namespace harness::planner
