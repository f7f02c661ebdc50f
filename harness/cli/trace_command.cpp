#include "harness/cli/trace_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "harness/analysis/trace_breakdown.h"
#include "harness/analysis/trace_merge.h"
#include "harness/results/run_manifest.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

std::string experiment_of(const fs::path& directory) {
  if (fs::exists(directory / "manifest.json")) return read_manifest(directory).experiment;
  return fs::absolute(directory).lexically_normal().filename().string();
}

// "p000, p001" from the runs, for messages about a filter that matched nothing.
template <typename Field>
std::string listed(const std::vector<TraceRun>& runs, Field field) {
  std::set<std::string> values;
  for (const auto& run : runs) values.insert(field(run));
  return join(std::vector<std::string>(values.begin(), values.end()), ", ");
}

std::vector<TraceRun> select_runs(const fs::path& directory, const TraceOptions& options) {
  const std::vector<TraceRun> all = find_trace_runs(directory);
  if (all.empty()) {
    throw InputError(directory.string() +
                     ": no traces in this results folder (no raw/<point>/<system>/rep<k>/"
                     "trace_rank<r>.json)");
  }
  std::vector<TraceRun> runs = all;
  const auto keep = [&](auto predicate, const std::string& option, const std::string& value,
                        const std::string& available) {
    std::vector<TraceRun> kept;
    for (const auto& run : runs) {
      if (predicate(run)) kept.push_back(run);
    }
    if (kept.empty()) {
      throw InputError(directory.string() + ": no traces match " + option + " " + value +
                       " (runs with traces have " + available + ")");
    }
    runs = std::move(kept);
  };
  if (!options.point.empty()) {
    keep([&](const TraceRun& r) { return r.point == options.point || r.label == options.point; },
         "--point", options.point,
         "points " + listed(runs, [](const TraceRun& r) { return r.point; }));
  }
  if (!options.system.empty()) {
    keep([&](const TraceRun& r) { return r.system == options.system; }, "--system", options.system,
         "systems " + listed(runs, [](const TraceRun& r) { return r.system; }));
  }
  if (options.repeat) {
    keep([&](const TraceRun& r) { return r.repeat == *options.repeat; }, "--repeat",
         std::to_string(*options.repeat),
         "repeats " + listed(runs, [](const TraceRun& r) { return std::to_string(r.repeat); }));
  }
  if (!options.output.empty() && std::filesystem::is_directory(options.output)) {
    throw InputError("--output " + options.output.string() +
                     ": is a folder; give the file to write the merged trace to");
  }
  if (!options.output.empty() && runs.size() > 1) {
    throw InputError("--output " + options.output.string() +
                     " takes the merged trace of one run, " + std::to_string(runs.size()) +
                     " runs have traces here (choose one with --point, --system, --repeat)");
  }
  return runs;
}

}  // namespace

int run_trace(const fs::path& directory, const TraceOptions& options, std::ostream& out,
              std::ostream& err) {
  if (!fs::is_directory(directory)) {
    throw InputError(directory.string() + ": no such results folder");
  }
  const std::vector<TraceRun> runs = select_runs(directory, options);
  const std::string experiment = experiment_of(directory);
  // Read and check every selected trace before writing anything.
  std::vector<LoadedTrace> loaded;
  for (const auto& run : runs) loaded.push_back(load_trace_run(run));

  for (const auto& trace : loaded) {
    for (const auto& warning : trace.warnings) err << "warning: " << warning << "\n";
    const fs::path merged_path =
        options.output.empty() ? trace.run.directory / "trace.json" : options.output;
    const std::string merged_name = options.output.empty()
                                        ? fs::relative(merged_path, directory).string()
                                        : merged_path.string();
    const TraceBreakdown breakdown = trace_breakdown(trace);
    const std::string markdown = breakdown_markdown(trace, breakdown, experiment, merged_name);
    write_file_atomic(merged_path, json_text(merged_trace(trace, experiment)) + "\n");
    write_file_atomic(trace.run.directory / "trace_breakdown.md", markdown);
    write_file_atomic(
        trace.run.directory / "trace_breakdown.json",
        json_text(breakdown_json(trace, breakdown, experiment, merged_name), 2) + "\n");
    out << markdown << "\nwrote " << merged_path.string() << " (open in ui.perfetto.dev or "
        << "chrome://tracing), " << (trace.run.directory / "trace_breakdown.md").string()
        << ", trace_breakdown.json\n\n";
  }
  return 0;
}

void add_trace_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "trace",
      "Merge each run's per-rank traces into one Chrome trace; print the compute / "
      "communication / idle breakdown per rank");
  sub->footer("Example:\n  harness trace results/dapple_vs_gpipe_vs_ddp/<stamp>");
  auto directory = std::make_shared<std::string>();
  auto options = std::make_shared<TraceOptions>();
  auto repeat = std::make_shared<long long>(-1);
  auto output = std::make_shared<std::string>();
  sub->add_option("results_dir", *directory, "Results folder of `harness run`")->required();
  sub->add_option("--point", options->point, "Only this point (id such as p000, or its label)");
  sub->add_option("--system", options->system, "Only this system");
  sub->add_option("--repeat", *repeat, "Only this repeat (0, 1, ...)")
      ->check(CLI::Range(0LL, kMaxRepeats - 1));
  sub->add_option("--output", *output,
                  "Write the merged trace of the one selected run here (default: trace.json in "
                  "the run's raw folder)");
  sub->callback([directory, options, repeat, output]() {
    if (*repeat >= 0) options->repeat = *repeat;
    options->output = *output;
    run_trace(*directory, *options, std::cout, std::cerr);
  });
}

}  // namespace harness
