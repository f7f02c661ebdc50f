#include "harness/cli/plot_command.h"

#include <yaml-cpp/yaml.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/text_util.h"
#include "common/yaml_file.h"
#include "harness/plot/figures.h"
#include "harness/plot/kinds.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The experiment's name for titles: the manifest's, a `kind: plan` folder's spec.yaml name, or
// the folder's own name.
std::string experiment_name(const fs::path& directory, const std::optional<ResultSamples>& run) {
  if (run) return run->manifest.experiment;
  if (fs::exists(directory / "spec.yaml")) {
    const YAML::Node spec = read_yaml_file(directory / "spec.yaml");
    if (spec.IsMap() && spec["name"] && spec["name"].IsScalar()) return spec["name"].Scalar();
  }
  return fs::absolute(directory).lexically_normal().filename().string();
}

// figures.json's entries of the kinds not drawn this time, which it keeps; none where it is
// missing or unreadable (rebuilt from what is drawn now).
json kept_figures(const fs::path& plots, const std::vector<std::string>& kinds) {
  json index = json::array();
  if (!fs::exists(plots / "figures.json")) return index;
  try {
    for (const auto& entry : parse_json(read_file(plots / "figures.json"))) {
      const std::string kind = entry.value("kind", "");
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) index.push_back(entry);
    }
  } catch (const json::exception&) {
    return json::array();
  }
  return index;
}

FigureSet figures_of_kind(const std::string& kind, const fs::path& directory,
                          const std::string& experiment, const std::optional<ResultSamples>& run) {
  if (kind == "planner") return planner_figures(directory, experiment);
  if (kind == "timeline") return timeline_figures(directory, experiment);
  if (!run) {
    FigureSet set;
    set.unfit = "not a training results folder (no manifest.json)";
    return set;
  }
  if (kind == "bucket_sweep") return bucket_sweep_figures(*run);
  if (kind == "sweep") return sweep_figures(*run);
  if (kind == "bandwidth") return bandwidth_figures(*run);
  if (kind == "scaling") return scaling_figures(*run);
  return cdf_figures(*run);
}

std::vector<std::string> all_kinds() { return {std::begin(kPlotKinds), std::end(kPlotKinds)}; }

}  // namespace

size_t run_plots(const fs::path& directory, const std::vector<std::string>& requested,
                 std::ostream& out) {
  const std::vector<std::string> known = all_kinds();
  std::vector<std::string> kinds;
  for (const auto& kind : requested.empty() ? known : requested) {
    if (kind == "all") {
      kinds = known;
      break;
    }
    if (std::find(known.begin(), known.end(), kind) == known.end()) {
      const std::string hint = closest_match(kind, known);
      throw InputError("unknown plot kind '" + kind + "' (expected " + join(known, ", ") +
                       (hint.empty() ? "" : "; did you mean '" + hint + "'?") + ")");
    }
    kinds.push_back(kind);
  }
  if (!fs::is_directory(directory)) {
    throw InputError(directory.string() + ": no such results folder");
  }
  // A folder the harness never wrote (empty, or someone else's): nothing any kind could draw,
  // which is bad input, said in one line before anything is drawn or printed. In a harness
  // folder a kind that does not fit says so.
  if (!fs::exists(directory / "manifest.json") && !fs::exists(directory / "raw") &&
      !fs::exists(directory / "spec.yaml")) {
    throw InputError(directory.string() +
                     ": nothing to plot (not a results folder: no manifest.json, raw/ or "
                     "spec.yaml)");
  }
  std::optional<ResultSamples> run;
  if (fs::exists(directory / "manifest.json")) run = read_result_samples(directory);
  const std::string experiment = experiment_name(directory, run);
  const fs::path plots = directory / "plots";

  json index = kept_figures(plots, kinds);
  size_t drawn = 0;
  // Asked for every kind, a kind that does not fit is one name in a closing line, not a line of
  // its own; asked by name, it says why.
  const bool every_kind = requested.empty();
  std::vector<std::string> unfit_kinds, unfit_lines;
  for (const auto& kind : kinds) {
    const FigureSet set = figures_of_kind(kind, directory, experiment, run);
    for (const auto& note : set.notes) out << "plot " << kind << ": " << note << "\n";
    if (!set.unfit.empty()) {
      unfit_kinds.push_back(kind);
      unfit_lines.push_back("plot " + kind + ": does not fit " + directory.string() + ": " +
                            set.unfit);
      continue;
    }
    for (const Figure& figure : set.figures) {
      render_figure(figure, plots);
      index.push_back({{"kind", figure.kind},
                       {"title", figure.title},
                       {"png", "plots/" + figure.stem + ".png"},
                       {"svg", "plots/" + figure.stem + ".svg"},
                       {"data", "plots/" + figure.stem + ".dat"},
                       {"script", "plots/" + figure.stem + ".gp"}});
      out << "plot " << kind << ": " << (plots / (figure.stem + ".png")).string()
          << " (+ .svg, .dat, .gp)\n";
      ++drawn;
    }
  }
  if (every_kind && drawn > 0 && !unfit_kinds.empty()) {
    out << "plot: not drawn, as they do not fit this folder: " << join(unfit_kinds, ", ")
        << " (--kind K says why)\n";
  } else {
    for (const auto& line : unfit_lines) out << line << "\n";
  }
  if (drawn > 0 || fs::exists(plots)) {
    write_file_atomic(plots / "figures.json", json_text(index, 2) + "\n");
  }
  return drawn;
}

void add_plot_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "plot", "Draw the figures of a results folder with gnuplot (PNG, SVG, data, script)");
  sub->footer(
      "Examples:\n"
      "  harness plot results/first/<stamp>               # every kind that fits\n"
      "  harness plot results/first/<stamp> --kind cdf     # one kind, or why it does not fit");
  auto directory = std::make_shared<std::string>();
  auto kinds = std::make_shared<std::vector<std::string>>();
  sub->add_option("results_dir", *directory, "Results folder of `harness run`")->required();
  sub->add_option("--kind", *kinds,
                  "Figure kind (repeatable or comma-separated): " + join(all_kinds(), ", ") +
                      " or all (default)")
      ->delimiter(',');
  sub->callback([directory, kinds]() { run_plots(*directory, *kinds, std::cout); });
}

}  // namespace harness
