#include "harness/cli/plan_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "harness/cli/option_checks.h"
#include "harness/plot/kinds.h"
#include "harness/spec/published_profiles.h"
#include "harness/spec/spec_errors.h"
#include "harness/spec/yaml_reader.h"
#include "planner/cluster/topology.h"
#include "planner/report/explain.h"
#include "planner/report/noise_report.h"
#include "planner/report/plan_report.h"
#include "planner/search/batch_range.h"
#include "planner/search/planner.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using planner::PlannerMode;

planner::PlannerOptions options_from(const PlanRequest& request, const std::string& where) {
  planner::PlannerOptions options;
  const auto mode = planner::parse_planner_mode(request.mode);
  if (!mode)
    throw InputError(where + ": mode must be compat or dapple, got '" + request.mode + "'");
  options.mode = *mode;
  if (request.profile_batch <= 0) throw InputError(where + ": profile batch size must be positive");
  options.setup.profile_batch_size = request.profile_batch;
  if (request.micro_batch < 0) throw InputError(where + ": micro-batch size must be positive");
  options.setup.micro_batch_size = request.micro_batch;
  if (!(request.optimizer_memory_scaling > 0)) {
    throw InputError(where + ": optimizer memory scaling must be positive");
  }
  options.setup.optimizer_memory_scaling = request.optimizer_memory_scaling;
  options.setup.peak_activation_per_sample = request.peak_activation_per_sample;
  if (request.threads < 1) throw InputError(where + ": threads must be at least 1");
  options.threads = request.threads;
  if (!request.placement.empty() && request.placement != "all") {
    const auto policy = planner::parse_placement_policy(request.placement);
    if (!policy) {
      throw InputError(where + ": placement must be fresh, append, scatter or all, got '" +
                       request.placement + "'");
    }
    options.policies = {*policy};
  }
  options.topology = planner::load_topology(
      request.topology.empty() ? planner::default_topology_path() : request.topology);
  if (!request.devices.empty()) {
    options.devices = planner::parse_devices(request.devices, where);
  } else {
    std::vector<int> separators;
    for (int count : options.topology.gpus_per_machine) {
      separators.push_back((separators.empty() ? 0 : separators.back()) + count);
    }
    if (separators.empty()) {
      throw InputError(where + ": no devices given and topology '" + options.topology.name +
                       "' lists no machines");
    }
    options.devices = planner::Devices(separators);
  }
  return options;
}

// Percent values of the noise options: [0, 100) -- 100% noise could zero a bandwidth.
void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int run_plan(const PlanRequest& request, std::ostream& out) {
  const planner::PlannerOptions options = options_from(request, "plan");
  const std::vector<int> batches = planner::parse_batch_sizes(request.global_batches, "--gbs");
  const planner::ModelProfile profile = planner::import_profile(request.profile);
  if (!request.out_dir.empty()) create_output_folder(request.out_dir, "--out");

  const auto start = std::chrono::steady_clock::now();
  const planner::SweepResult sweep = planner::plan_sweep(profile, options, batches);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  out << "# " << profile.source << ": " << profile.num_states() << " states, mode "
      << planner::to_string(options.mode) << ", devices " << options.devices.describe() << ", pbs "
      << options.setup.profile_batch_size << '\n';
  planner::write_table(out, sweep);
  std::ostringstream explanation;
  if (request.explain) {
    planner::write_mode_differences(explanation, profile, options, batches);
    out << '\n' << explanation.str();
  }
  if (!request.out_dir.empty()) {
    std::ostringstream csv;
    planner::write_csv(csv, sweep);
    write_file(fs::path(request.out_dir) / "plan.csv", csv.str());
    nlohmann::json doc = planner::plan_json(profile, options, sweep);
    doc["planning_seconds"] = seconds;
    doc["threads"] = options.threads;
    write_file(fs::path(request.out_dir) / "plan.json", json_text(doc, 2) + "\n");
    if (request.explain) write_file(fs::path(request.out_dir) / "explain.txt", explanation.str());
    out << "wrote " << (fs::path(request.out_dir) / "plan.csv").string() << " and plan.json\n";
  }
  for (const planner::NoiseSettings& settings : request.noise_studies) {
    const planner::NoiseStudy study =
        planner::run_noise_study(profile, options, batches, sweep, settings);
    out << '\n';
    planner::write_noise_table(out, study);
    if (request.out_dir.empty()) continue;
    const std::string name = planner::noise_study_name(settings);
    std::ostringstream csv;
    planner::write_noise_csv(csv, study);
    write_file(fs::path(request.out_dir) / (name + ".csv"), csv.str());
    write_file(fs::path(request.out_dir) / (name + ".json"),
               json_text(planner::noise_json(study), 2) + "\n");
    out << "wrote " << (fs::path(request.out_dir) / (name + ".csv")).string() << " and " << name
        << ".json\n";
  }
  return 0;
}

void add_plan_command(CLI::App& app) {
  auto* sub = app.add_subcommand("plan", "DAPPLE planner: DP and hybrid pipeline estimates");
  sub->footer(
      "Example:\n"
      "  harness plan --profile {profiles}/resnet50/graph.txt --pbs 32 --gbs 32:4096:64 --devices "
      "8,16\n"
      "(scripts/fetch-profiles.sh fetches the published profiles; planner/README.md)");
  auto request = std::make_shared<PlanRequest>();
  sub->add_option("--profile", request->profile,
                  "PipeDream graph.txt profile ({profiles}/... names a published one)")
      ->required()
      ->transform(CLI::Validator(
          [](std::string& text) {
            const std::string written = text;
            text = resolve_profile_path(written);
            return profile_problem(written);
          },
          ""));
  sub->add_option("--pbs", request->profile_batch, "Batch size the profile was taken at")
      ->required()
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option("--gbs", request->global_batches,
                  "Global batch sizes: start:end:step (start, then multiples of step) or a list")
      ->capture_default_str();
  sub->add_option("--devices", request->devices,
                  "Machine separators (8,16) or machines x GPUs (2x8); default: the topology's")
      ->check(CLI::Validator(
          [](std::string& text) { return text.empty() ? std::string("is empty") : ""; }, ""));
  sub->add_option("--mode", request->mode, "compat (published numbers) or dapple (corrected)")
      ->capture_default_str();
  sub->add_option("--topology", request->topology, "Topology YAML (dapple bandwidths, memory)");
  sub->add_option("--threads", request->threads, "Planning threads")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxPlannerThreads));
  sub->add_option("--placement", request->placement,
                  "Only this GPU placement policy: fresh, append or scatter (default: all)");
  sub->add_option("--micro-batch", request->micro_batch, "Micro-batch size (default: pbs)")
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option("--optimizer-scaling", request->optimizer_memory_scaling,
                  "Parameter memory multiple for weights+gradients+optimizer state")
      ->capture_default_str()
      ->check(finite_number(0, true));
  sub->add_option("--peak-activation", request->peak_activation_per_sample,
                  "Activation bytes per sample (default: profile total / pbs)")
      ->check(finite_number(0, true));
  sub->add_flag("--explain", request->explain, "List where compat and dapple differ");
  sub->add_option("--out", request->out_dir, "Write plan.csv and plan.json here");
  auto noise_compute = std::make_shared<std::optional<double>>();
  auto noise_bandwidth = std::make_shared<std::optional<double>>();
  auto noise = std::make_shared<planner::NoiseSettings>();
  sub->add_option("--noise-compute", *noise_compute,
                  "Noise study: +-PCT uniform noise on each layer's compute time")
      ->check(finite_number(0, false));
  sub->add_option("--noise-bandwidth", *noise_bandwidth,
                  "Noise study: +-PCT uniform noise on each bandwidth")
      ->check(finite_number(0, false));
  sub->add_option("--noise-seeds", noise->seeds, "Noise study: number of seeds")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  sub->add_option("--noise-seed", noise->first_seed, "Noise study: first seed")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000000));
  sub->callback([request, noise_compute, noise_bandwidth, noise]() {
    int code = 0;
    try {
      if (*noise_compute || *noise_bandwidth) {
        planner::NoiseSettings settings = *noise;
        settings.compute_fraction =
            percent_as_fraction(noise_compute->value_or(0.0), "plan", "--noise-compute");
        settings.bandwidth_fraction =
            percent_as_fraction(noise_bandwidth->value_or(0.0), "plan", "--noise-bandwidth");
        if (settings.seeds < 1) throw InputError("plan: --noise-seeds must be at least 1");
        request->noise_studies = {settings};
      }
      code = run_plan(*request, std::cout);
    } catch (const InputError& e) {
      std::cerr << "error: " << e.what() << '\n';
      code = 2;
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << '\n';
      code = 1;
    }
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness

namespace harness {
namespace {

constexpr long long kMaxPlanCount = 1LL << 24;

// "8,16", "2x8" or [8, 16] (devices); "32:4096:64", "128,256" or [128, 256] (gbs).
std::string list_or_text(MapReader& r, const std::string& key) {
  if (r.child(key).IsSequence()) {
    std::string joined;
    for (long long n : r.get_int_list(key, std::nullopt, 1)) {
      joined += (joined.empty() ? "" : ",") + std::to_string(n);
    }
    return joined;
  }
  return r.get_string(key, std::nullopt);
}

// Runs `check`, a planner parser that throws InputError naming `where` (the key's value in the
// file), and records its error beside the reader's own.
void check_at(MapReader& r, const std::string& key,
              const std::function<void(const std::string& where)>& check) {
  const std::string where = r.origin().where(r.child(key), r.key_path(key));
  try {
    check(where);
  } catch (const InputError& e) {
    if (SpecErrors* errors = r.origin().errors()) {
      errors->add(e);
    } else {
      throw;
    }
  }
}

// The keys a model entry (or the plan map itself) may set for one profile.
void read_model_keys(MapReader& r, PlanRequest& request) {
  if (r.has("profile")) {
    // "{profiles}/..." names a published profile (harness/spec/published_profiles.h). The
    // file is opened now, so that a wrong path is reported at the key that names it.
    const std::string written = r.get_string("profile", std::nullopt);
    request.profile = resolve_profile_path(written);
    if (const std::string problem = profile_problem(written); !problem.empty()) {
      r.report(r.child("profile"), "profile", problem);
    }
  }
  if (r.has("pbs")) request.profile_batch = static_cast<int>(r.get_int("pbs", 1, 1, kMaxPlanCount));
  if (r.has("micro_batch")) {
    request.micro_batch = static_cast<int>(r.get_int("micro_batch", 1, 1, kMaxPlanCount));
  }
  if (r.has("peak_activation")) {
    request.peak_activation_per_sample = r.get_double("peak_activation", std::nullopt, 0.0);
  }
  if (r.has("optimizer_scaling")) {
    request.optimizer_memory_scaling = r.get_double("optimizer_scaling", std::nullopt, 0.0);
  }
  if (r.has("gbs")) {
    request.global_batches = list_or_text(r, "gbs");
    check_at(r, "gbs", [&](const std::string& where) {
      planner::parse_batch_sizes(request.global_batches, where);
    });
  }
}

// `plots:`, figure kinds of `harness plot` (or all) drawn when the study is done.
std::vector<std::string> read_plot_list(MapReader& r) {
  std::vector<std::string> kinds(std::begin(kPlotKinds), std::end(kPlotKinds));
  kinds.push_back("all");
  const std::string expected = "expected a list of " + join(kinds, ", ");
  const YAML::Node value = r.child("plots");
  if (!value.IsSequence()) r.fail(value, "plots", expected);
  std::vector<std::string> chosen;
  for (const auto& item : value) {
    const std::string kind = item.IsScalar() ? item.Scalar() : "";
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      r.report(item, "plots", "unknown figure kind " + describe_node(item) + " (" + expected + ")");
      continue;
    }
    chosen.push_back(kind);
  }
  return chosen;
}

// `models:`, a list of entries each with a name and the keys of one profile.
std::vector<PlanSpecModel> read_model_entries(MapReader& r) {
  const YAML::Node value = r.child("models");
  if (!value.IsSequence() || value.size() == 0) r.fail(value, "models", "must be a non-empty list");
  std::vector<PlanSpecModel> models;
  for (const auto& item : value) {
    MapReader entry(item, r.key_path("models"), r.origin());
    PlanSpecModel model;
    model.name = entry.get_string("name", std::nullopt);
    read_model_keys(entry, model.request);
    entry.finish();
    models.push_back(std::move(model));
  }
  return models;
}

// `devices:`, one layout ("8,16") or a map of named layouts; (name, devices) pairs.
std::vector<std::pair<std::string, std::string>> read_device_layouts(MapReader& r) {
  std::vector<std::pair<std::string, std::string>> layouts;
  if (!r.child("devices").IsMap()) {
    const std::string devices = list_or_text(r, "devices");
    check_at(r, "devices",
             [&](const std::string& where) { planner::parse_devices(devices, where); });
    layouts.emplace_back("", devices);
    return layouts;
  }
  MapReader named(r.child("devices"), r.key_path("devices"), r.origin());
  for (const auto& layout : r.child("devices")) {
    const std::string name = layout.first.as<std::string>();
    const std::string devices = list_or_text(named, name);
    check_at(named, name,
             [&](const std::string& where) { planner::parse_devices(devices, where); });
    layouts.emplace_back(name, devices);
  }
  return layouts;
}

// `noise:`, one study ({compute, bandwidth, seeds, first_seed}, percentages) or a list of them.
std::vector<planner::NoiseSettings> read_noise_studies(MapReader& r) {
  const YAML::Node value = r.child("noise");
  const YAML::Node list = value.IsSequence() ? value : YAML::Node(std::vector<YAML::Node>{value});
  std::vector<planner::NoiseSettings> studies;
  for (const auto& item : list) {
    MapReader study(item, r.key_path("noise"), r.origin());
    planner::NoiseSettings settings;
    for (const char* key : {"compute", "bandwidth"}) {
      const double percent = study.get_double(key, 0.0, MapReader::kZeroOrMore);
      if (percent >= 100.0) study.report(study.child(key), key, "must be a percentage below 100");
      (std::string(key) == "compute" ? settings.compute_fraction : settings.bandwidth_fraction) =
          percent / 100.0;
    }
    settings.seeds = static_cast<int>(study.get_int("seeds", settings.seeds, 1, kMaxPlanCount));
    settings.first_seed = static_cast<std::uint64_t>(
        study.get_int("first_seed", static_cast<long long>(settings.first_seed), 0, 1000000000));
    study.finish();
    studies.push_back(settings);
  }
  return studies;
}

// `mode:`, one of compat and dapple, or a list of them.
std::vector<std::string> read_modes(MapReader& r) {
  const YAML::Node value = r.child("mode");
  if (!value.IsSequence()) return {r.get_string("mode", std::nullopt, {"compat", "dapple"})};
  std::vector<std::string> modes;
  for (const auto& m : value) {
    if (!m.IsScalar() || !planner::parse_planner_mode(m.Scalar())) {
      r.report(m, "mode", "expected compat or dapple, got " + describe_node(m));
      continue;
    }
    modes.push_back(m.Scalar());
  }
  return modes;
}

// The plan map's own keys beside the model's: devices, modes, topology, placement, threads,
// explain, noise studies, models and plots.
void read_plan_keys(MapReader& r, PlanRequest& base, PlanSpecRuns& runs) {
  if (r.has("devices")) runs.layouts = read_device_layouts(r);
  if (r.has("mode")) runs.modes = read_modes(r);
  if (r.has("topology")) {
    base.topology = r.get_string("topology", std::nullopt);
    check_at(r, "topology", [&](const std::string&) { planner::load_topology(base.topology); });
  }
  if (r.has("placement")) {
    base.placement = r.get_string("placement", std::nullopt, {"fresh", "append", "scatter", "all"});
  }
  base.threads = static_cast<int>(r.get_int("threads", 1, 1, kMaxPlannerThreads));
  base.explain = r.get_bool("explain", false);
  if (r.has("noise")) base.noise_studies = read_noise_studies(r);
  if (r.has("models")) runs.models = read_model_entries(r);
  if (r.has("plots")) runs.plots = read_plot_list(r);
}

// A model entry's request: what it sets itself, the rest inherited from the plan map.
PlanRequest merged_request(const PlanRequest& base, const PlanRequest& own) {
  PlanRequest merged = base;
  if (!own.profile.empty()) merged.profile = own.profile;
  if (own.profile_batch > 0) merged.profile_batch = own.profile_batch;
  if (own.micro_batch > 0) merged.micro_batch = own.micro_batch;
  if (own.peak_activation_per_sample) {
    merged.peak_activation_per_sample = own.peak_activation_per_sample;
  }
  if (own.optimizer_memory_scaling != PlanRequest{}.optimizer_memory_scaling) {
    merged.optimizer_memory_scaling = own.optimizer_memory_scaling;
  }
  if (own.global_batches != PlanRequest{}.global_batches) {
    merged.global_batches = own.global_batches;
  }
  return merged;
}

}  // namespace

// A plan spec's `plan:` map, read whole: its models (each complete, its profile readable),
// device layouts and modes. InputError with file:line:column for anything wrong.
PlanSpecRuns read_plan_spec(const std::string& spec_path, const YAML::Node& spec,
                            SpecErrors& errors) {
  SpecOrigin origin(spec_path);
  origin.report_to(&errors);
  const YAML::Node plan = spec["plan"];
  if (!plan || !plan.IsMap()) {
    if (!plan) errors.add(InputError(spec_path + ": a 'kind: plan' spec needs a 'plan' map"));
    if (plan) errors.add(origin.error(plan, "plan", "plan: must be a mapping"));
    errors.throw_if_any();
  }
  const size_t errors_before = errors.count();
  PlanRequest base;
  PlanSpecRuns runs;
  // Every key is read even when an earlier one is wrong: all errors are reported at once.
  MapReader r(plan, "plan", origin);
  errors.collect([&] {
    read_model_keys(r, base);
    read_plan_keys(r, base, runs);
    r.finish();
  });
  // Nothing below is judged against a key that was read wrong.
  if (errors.count() != errors_before) errors.throw_if_any();
  auto& [models, layouts, modes, plots] = runs;
  if (models.empty()) {
    if (base.profile.empty() || base.profile_batch <= 0) {
      errors.add(origin.error(plan, "plan", "'plan' needs 'profile' and 'pbs' (or 'models')"));
      errors.throw_if_any();
    }
    models.push_back({"", PlanRequest{}});
  }
  if (layouts.empty()) layouts.emplace_back("", "");
  if (modes.empty()) modes.push_back("dapple");
  // Every model is complete before any is planned: a bad later entry writes nothing.
  for (PlanSpecModel& model : models) {
    model.request = merged_request(base, model.request);
    if (model.request.profile.empty() || model.request.profile_batch <= 0) {
      errors.add(
          origin.error(plan, "plan", "model '" + model.name + "' needs 'profile' and 'pbs'"));
    }
  }
  errors.throw_if_any();
  return runs;
}

int run_plan_spec(const PlanSpecRuns& runs, const std::string& output_dir) {
  const auto& [models, layouts, modes, plots] = runs;
  for (const PlanSpecModel& model : models) {
    const PlanRequest& merged = model.request;
    for (const auto& [layout_name, devices] : layouts) {
      for (const std::string& mode : modes) {
        PlanRequest request = merged;
        request.devices = devices;
        request.mode = mode;
        fs::path dir(output_dir);
        if (!model.name.empty()) dir /= model.name;
        if (!layout_name.empty()) dir /= layout_name;
        if (modes.size() > 1) dir /= mode;
        request.out_dir = dir.string();
        std::cout << "== " << (model.name.empty() ? request.profile : model.name)
                  << (layout_name.empty() ? "" : " / " + layout_name) << " / " << mode << '\n';
        const int code = run_plan(request, std::cout);
        if (code != 0) return code;
      }
    }
  }
  return 0;
}

}  // namespace harness
