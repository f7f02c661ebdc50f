#include "harness/results/run_summary.h"

#include <algorithm>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/text_util.h"
#include "harness/results/report_samples.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A sample is a time: a finite, non-negative number written whole ("1.5x", "nan", "-3" and
// "inf" are a corrupt file, not a sample -- a NaN would poison every statistic and the
// Mann-Whitney ranking after it).
double sample_value(const std::string& field, const fs::path& path, int line,
                    const std::string& column) {
  const std::string where = path.string() + ":" + std::to_string(line) + ": " + column + " ";
  const std::optional<double> parsed = parse_whole_number(field);
  if (!parsed) throw InputError(where + "is not a number: '" + field + "'");
  const double value = *parsed;
  if (!std::isfinite(value)) throw InputError(where + "is not finite: '" + field + "'");
  if (value < 0) throw InputError(where + "is negative: '" + field + "'");
  return value;
}

}  // namespace

std::map<std::string, std::vector<double>> read_sample_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot read");
  std::string line;
  std::getline(in, line);
  const auto header = split(line, ',');
  if (header.empty() || header[0] != "iteration") {
    throw InputError(path.string() + ":1: expected a header starting with 'iteration'");
  }
  if (std::find(header.begin(), header.end(), "iteration_ms") == header.end()) {
    throw InputError(path.string() + ":1: no 'iteration_ms' column (header '" + line + "')");
  }
  std::vector<std::string> phases;
  for (size_t i = 1; i < header.size(); ++i) {
    std::string name = header[i];
    if (name.size() > 3 && name.compare(name.size() - 3, 3, "_ms") == 0) {
      name.resize(name.size() - 3);
    }
    phases.push_back(name);
  }
  std::map<std::string, std::vector<double>> samples;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const auto fields = split(line, ',');
    if (fields.size() != header.size()) {
      throw InputError(path.string() + ":" + std::to_string(number) + ": expected " +
                       std::to_string(header.size()) + " fields");
    }
    for (size_t i = 1; i < fields.size(); ++i) {
      samples[phases[i - 1]].push_back(sample_value(fields[i], path, number, header[i]));
    }
  }
  // A rank that finished measured at least one iteration (run.iterations >= 1).
  if (samples.empty()) throw InputError(path.string() + ": no samples after the header");
  return samples;
}

RunSummary summarize_run_directory(const fs::path& run_directory) {
  // One pooling of samples for summaries, compare and plots: read_result_samples.
  return summarize_samples(read_result_samples(run_directory));
}

RunSummary summarize_samples(const ResultSamples& samples) {
  // The roofline: the machine figures env.json recorded for the ranks' host, if any.
  const json env = samples.environment.is_null() ? json::object() : samples.environment;
  RunSummary summary;
  summary.manifest = samples.manifest;
  for (const auto& point : samples.points) {
    PointSummary point_summary{point.point, {}};
    for (const auto& system : point.systems) {
      SystemSummary system_summary;
      system_summary.name = system.name;
      system_summary.ranks = point.point.world_size;
      system_summary.complete_runs = system.complete_runs;
      for (const char* phase : kPhases) {
        if (auto it = system.phases.find(phase); it != system.phases.end()) {
          system_summary.phases[phase] = summarize(it->second);
        }
      }
      if (auto it = system.phases.find("iteration"); it != system.phases.end()) {
        system_summary.utilisation =
            system_utilisation(env, system.flops, system.config, it->second);
        system_summary.tokens_per_s = tokens_per_second(system.config, point.point.world_size,
                                                        system_summary.phases.at("iteration").p50);
      }
      system_summary.memory = largest_rank_memory(system.memory);
      point_summary.systems.push_back(std::move(system_summary));
    }
    summary.points.push_back(std::move(point_summary));
  }
  return summary;
}

json summary_to_json(const RunSummary& summary) {
  json out;
  out["experiment"] = summary.manifest.experiment;
  out["baseline"] = summary.manifest.baseline;
  out["unit"] = "ms";
  out["pooling"] = "samples of all ranks and complete repeats, warm-up excluded";
  out["percentiles"] = "linear interpolation between closest ranks (numpy default)";
  out["points"] = json::array();
  for (const auto& point : summary.points) {
    json p;
    p["id"] = point.point.id;
    p["label"] = point.point.label;
    p["systems"] = json::array();
    for (const auto& system : point.systems) {
      json s;
      s["name"] = system.name;
      s["complete_runs"] = system.complete_runs;
      s["expected_runs"] = point.point.repeats;
      s["ranks"] = system.ranks;
      s["phases"] = json::object();
      for (const auto& [phase, stats] : system.phases) {
        s["phases"][phase] = {
            {"count", stats.count}, {"mean", stats.mean}, {"stddev", stats.stddev},
            {"min", stats.min},     {"p50", stats.p50},   {"p90", stats.p90},
            {"p95", stats.p95},     {"p99", stats.p99},   {"max", stats.max}};
      }
      if (system.tokens_per_s) {
        s["tokens_per_s"] = *system.tokens_per_s;
        s["tokens_per_s_per_rank"] = *system.tokens_per_s_per_rank();
      }
      if (const auto& u = system.utilisation) {
        s["utilisation"] = {{"flops_per_rank_iteration", u->flops_per_rank},
                            {"iteration_p50_ms", u->iteration_p50_ms},
                            {"gflops_per_rank", u->gflops_per_rank},
                            {"peak_gflops_per_rank",
                             u->peak_gflops_per_rank ? json(*u->peak_gflops_per_rank) : json()},
                            {"mfu", u->mfu ? json(*u->mfu) : json()},
                            {"precision", u->precision},
                            {"samples", u->samples}};
      }
      if (const auto& m = system.memory) {
        s["memory_per_rank"] = {{"parameter_bytes", m->parameter_bytes},
                                {"expert_parameter_bytes", m->expert_parameter_bytes},
                                {"gradient_bytes", m->gradient_bytes},
                                {"optimizer_state_bytes", m->optimizer_state_bytes},
                                {"peak_resident_bytes", m->peak_resident_bytes},
                                {"ranks", m->ranks}};
        if (m->peak_device_allocated_bytes) {
          s["memory_per_rank"]["peak_device_allocated_bytes"] = *m->peak_device_allocated_bytes;
        }
        if (m->peak_device_reserved_bytes) {
          s["memory_per_rank"]["peak_device_reserved_bytes"] = *m->peak_device_reserved_bytes;
        }
      }
      p["systems"].push_back(std::move(s));
    }
    out["points"].push_back(std::move(p));
  }
  return out;
}

}  // namespace harness
