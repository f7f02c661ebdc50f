#include "harness/history/results_records.h"

#include <yaml-cpp/yaml.h>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/child_process.h"
#include "common/identifier_checks.h"
#include "common/input_error.h"
#include "common/statistics.h"
#include "common/text_util.h"
#include "harness/results/model_flops.h"
#include "harness/results/run_counters.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// FNV-1a, 64 bits: a stable hash (std::hash is not, across libraries).
std::string fnv1a_hex(const std::string& text) {
  unsigned long long hash = 1469598103934665603ULL;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", hash);
  return hex;
}

// spec.yaml as resolved, less `output` (harness ab gives every round a folder of its own) and
// `run.repeats` (how many runs measure it, not what a run measures: a pull request's commit runs
// three times where main's run once).
std::string spec_without_output(const fs::path& folder) {
  const fs::path file = folder / "spec.yaml";
  std::ifstream in(file);
  if (!in) return "";
  try {
    YAML::Node spec = YAML::Load(in);
    if (spec.IsMap()) {
      spec.remove("output");
      const YAML::Node run = static_cast<const YAML::Node&>(spec)["run"];  // no key made
      if (run && run.IsMap()) spec["run"].remove("repeats");
    }
    YAML::Emitter out;
    out << spec;
    return out.c_str();
  } catch (const YAML::Exception& e) {
    throw InputError(file.string() + ": not YAML (" + e.msg + ")");
  }
}

std::string text_field(const json& env, const json::json_pointer& pointer) {
  if (!env.contains(pointer)) return "";
  const json& value = env.at(pointer);
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string revision_commit(const ResultSamples& folder) {
  std::string revision =
      text_field(folder.environment, json::json_pointer("/harness_git_revision"));
  if (revision.empty() || revision == "unknown") {
    throw InputError(folder.directory.string() +
                     ": env.json names no revision (ran outside a checkout); give --commit SHA");
  }
  if (revision.size() > 6 && revision.substr(revision.size() - 6) == "-dirty") {
    throw InputError(folder.directory.string() + ": ran from a work tree with changes (" +
                     revision + "): its results are no commit's; give --commit SHA to say whose");
  }
  if (const std::string problem = revision_name_problem(revision); !problem.empty()) {
    throw InputError(folder.directory.string() + "/env.json: harness_git_revision: " + problem +
                     " " + std::string(kRevisionNameRule));
  }
  return revision;
}

// Every name the request brings is checked before it reaches git, a database or a page.
void check_request_names(const AdditionRequest& request) {
  const auto check = [](const std::string& option, const std::string& value,
                        const std::string& problem, std::string_view rule = "") {
    if (value.empty() || problem.empty()) return;
    throw InputError(option + ": " + problem + (rule.empty() ? "" : " " + std::string(rule)));
  };
  check("--commit", request.commit, revision_name_problem(request.commit), kRevisionNameRule);
  check("--branch", request.branch, revision_name_problem(request.branch), kRevisionNameRule);
  check("--machine", request.machine, label_problem(request.machine));
  check("--commit-time", request.commit_time, iso8601_problem(request.commit_time));
}

// The commit's time as git knows it, else the run's start. The sha passed the revision rule
// (no leading '-'), and --end-of-options keeps git from reading it as an option all the same.
std::string commit_time(const std::string& sha, const ResultSamples& folder) {
  const CapturedOutput git =
      run_captured("git", {"show", "-s", "--format=%cI", "--end-of-options", sha});
  if (git.exit_code == 0) {
    const std::string line = git.out.substr(0, git.out.find('\n'));
    if (!line.empty() && iso8601_problem(line).empty()) return line;
  }
  return text_field(folder.environment, json::json_pointer("/started_utc"));
}

std::string machine_name(const ResultSamples& folder, const std::string& machine) {
  if (!machine.empty()) return machine;
  const std::string hostname = text_field(folder.environment, json::json_pointer("/hostname"));
  if (const std::string problem = label_problem(hostname); !problem.empty()) {
    throw InputError(folder.directory.string() + "/env.json: hostname: " + problem +
                     "; give --machine NAME");
  }
  return hostname;
}

void add_phase_values(const std::string& benchmark, const SystemSamples& system,
                      std::vector<RunValue>& values) {
  int run = 0;
  for (const PhaseSamples& phases : system.runs) {
    for (const char* phase : kPhases) {
      const auto found = phases.find(phase);
      if (found == phases.end() || found->second.empty()) continue;
      const SampleSummary summary = summarize(found->second);
      const std::string name = phase;
      for (const auto& [stat, value] : {std::pair{"p50", summary.p50},
                                        {"p90", summary.p90},
                                        {"p99", summary.p99},
                                        {"mean", summary.mean}}) {
        values.push_back({{benchmark, name + " " + stat, "ms", Better::lower}, run, value});
      }
    }
    ++run;
  }
}

void add_throughput_values(const std::string& benchmark, const ResultSamples& folder,
                           const SystemSamples& system, long long world_size,
                           std::vector<RunValue>& values) {
  int run = 0;
  for (const PhaseSamples& phases : system.runs) {
    const auto iteration = phases.find("iteration");
    if (iteration == phases.end() || iteration->second.empty()) {
      ++run;
      continue;
    }
    const auto used =
        system_utilisation(folder.environment, system.flops, system.config, iteration->second);
    if (used && used->mfu) {
      values.push_back({{benchmark, "MFU", "%", Better::higher}, run, *used->mfu * 100});
    }
    if (const auto tokens =
            tokens_per_second(system.config, world_size, percentile(iteration->second, 50))) {
      values.push_back({{benchmark, "tokens/s", "tokens/s", Better::higher}, run, *tokens});
    }
    ++run;
  }
}

void add_counter_values(const std::string& benchmark, const SystemSamples& system,
                        std::vector<RunValue>& values) {
  for (const RunCounter& counter : run_counters(system)) {
    if (counter.kind == CounterKind::layout) continue;
    values.push_back({{benchmark, counter.name, "", Better::lower}, 0, counter.value});
  }
}

}  // namespace

EnvironmentFingerprint environment_fingerprint(const ResultSamples& folder,
                                               const std::string& machine) {
  const json& env = folder.environment;
  const auto field = [&](const char* pointer) {
    return text_field(env, json::json_pointer(pointer));
  };
  const std::string name = machine_name(folder, machine);
  std::vector<std::pair<std::string, std::string>> parts{
      {"machine", name},
      {"CPU", field("/cpu_model") + " x " + field("/logical_cores")},
      {"LibTorch", field("/torch_version")},
      {"BLAS", field("/blas/library")},
      {"device", field("/device") + " " + field("/backend")},
      {"GPU", field("/machine/gpu/name")},
      {"driver", field("/gpu_driver")},
  };
  std::string description, key_text;
  for (const auto& [label, value] : parts) {
    key_text += label + "=" + value + "\n";
    if (value.empty() || value == " ") continue;
    description += (description.empty() ? "" : ", ") + label + " " + value;
  }
  const std::string spec_hash = fnv1a_hex(spec_without_output(folder.directory));
  key_text += "spec=" + spec_hash + "\n";
  description += ", spec " + spec_hash.substr(0, 8);
  return {fnv1a_hex(key_text), description};
}

namespace {

// Every metric of every run of a side's folders, one value per run (the folders ran one study,
// read_result_side checked: their runs follow one another as runs of one addition).
std::vector<RunValue> side_values(const ResultSide& side) {
  std::vector<RunValue> values;
  const ResultSamples& first = side.folders.front();
  for (size_t p = 0; p < first.points.size(); ++p) {
    for (size_t s = 0; s < first.points[p].systems.size(); ++s) {
      const std::string benchmark = first.manifest.experiment + " / " +
                                    first.points[p].point.label + " / " +
                                    first.points[p].systems[s].name;
      SystemSamples pooled = first.points[p].systems[s];
      pooled.runs.clear();
      for (const ResultSamples& folder : side.folders) {
        const SystemSamples& system = folder.points[p].systems[s];
        pooled.runs.insert(pooled.runs.end(), system.runs.begin(), system.runs.end());
      }
      add_phase_values(benchmark, pooled, values);
      add_throughput_values(benchmark, first, pooled, first.points[p].point.world_size, values);
      add_counter_values(benchmark, pooled, values);
    }
  }
  return values;
}

ResultSide checked_side(const std::filesystem::path& results) {
  std::error_code error;
  if (!fs::is_directory(results, error)) throw InputError(results.string() + ": no such folder");
  return read_result_side(results);
}

// The control's runs: the same study on the same machine (the same fingerprint), measured in the
// same job as the tested build's.
std::vector<RunValue> control_values(const AdditionRequest& request,
                                     const EnvironmentFingerprint& tested) {
  const ResultSide control = checked_side(request.control);
  const EnvironmentFingerprint environment =
      environment_fingerprint(control.folders.front(), request.machine);
  if (environment.key != tested.key) {
    throw InputError("--control " + request.control.string() +
                     ": another study or machine than the results (" + environment.description +
                     " against " + tested.description +
                     "); a control runs the same spec beside them");
  }
  std::vector<RunValue> values = side_values(control);
  if (values.empty()) {
    throw InputError("--control " + request.control.string() + ": no complete run to record");
  }
  return values;
}

}  // namespace

HistoryAddition addition_from_results(const AdditionRequest& request) {
  check_request_names(request);
  const ResultSide side = checked_side(request.results);
  const ResultSamples& first = side.folders.front();
  HistoryAddition addition;
  addition.commit.sha = request.commit.empty() ? revision_commit(first) : request.commit;
  addition.commit.branch = request.branch;
  addition.commit.committed_utc =
      request.commit_time.empty() ? commit_time(addition.commit.sha, first) : request.commit_time;
  addition.environment = environment_fingerprint(first, request.machine);
  addition.results = request.results.string();
  addition.values = side_values(side);
  if (addition.values.empty()) {
    throw InputError(request.results.string() +
                     ": no complete run to record (status.json says "
                     "why they failed)");
  }
  if (!request.control.empty()) {
    addition.control_values = control_values(request, addition.environment);
  }
  return addition;
}

}  // namespace harness
