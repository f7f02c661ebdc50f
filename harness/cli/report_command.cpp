#include "harness/cli/report_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/results/run_manifest.h"
#include "harness/results/run_status.h"
#include "harness/study/experiment_runner.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<fs::path> find_files(const fs::path& directory, const std::string& name) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().filename() == name) {
      found.push_back(fs::relative(entry.path(), directory));
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Figures as `harness plot` listed them; PNGs found in plots/ when there is no list.
json figure_index(const fs::path& directory) {
  const fs::path plots = directory / "plots";
  if (fs::exists(plots / "figures.json")) {
    try {
      return parse_json(read_file(plots / "figures.json"));
    } catch (const json::exception&) {
      // fall through: list the images themselves
    }
  }
  json figures = json::array();
  if (!fs::is_directory(plots)) return figures;
  std::vector<fs::path> images;
  for (const auto& entry : fs::directory_iterator(plots)) {
    if (entry.path().extension() == ".png") images.push_back(entry.path().filename());
  }
  std::sort(images.begin(), images.end());
  for (const auto& image : images) {
    const std::string stem = image.stem().string();
    figures.push_back({{"kind", ""}, {"title", stem}, {"png", "plots/" + image.string()}});
  }
  return figures;
}

void link_if_exists(std::ostream& out, const fs::path& directory, const std::string& file,
                    const std::string& what) {
  if (fs::exists(directory / file)) out << "- [" << file << "](" << file << "): " << what << "\n";
}

}  // namespace

std::string render_report_index(const fs::path& directory) {
  std::ostringstream out;
  const bool train = fs::exists(directory / "manifest.json");
  std::string experiment = fs::absolute(directory).lexically_normal().filename().string();
  Manifest manifest;
  if (train) {
    manifest = read_manifest(directory);
    experiment = manifest.experiment;
  }
  out << "# Report: " << experiment << "\n\n"
      << "Index of the tables and figures in this results folder. Regenerate with `harness "
         "report <folder>` (tables) and `harness plot <folder>` (figures).\n";
  if (const auto status = read_study_status(directory)) {
    out << "\nStatus: "
        << (status->complete ? "every run completed"
                             : std::to_string(status->failures) +
                                   " run(s) failed or were interrupted (see status.json)")
        << ", " << status->runs << " run(s) planned.\n";
  }

  out << "\n## Tables\n\n";
  link_if_exists(out, directory, "table.md",
                 "comparison tables (markdown), one per point and phase, delta% against the "
                 "baseline");
  link_if_exists(out, directory, "table.csv", "the same tables as CSV");
  link_if_exists(out, directory, "breakdown.md",
                 "where one traced iteration went, per point and system: compute, all-to-all, "
                 "all-reduce, send, recv, idle (mean over ranks)");
  link_if_exists(out, directory, "summary.json",
                 "count, mean, stddev, min, p50, p90, p95, p99, max per point, system and phase");
  for (const auto& csv : find_files(directory, "plan.csv")) {
    out << "- [" << csv.string() << "](" << csv.string()
        << "): planner speedups per global batch size";
    if (fs::exists(directory / csv.parent_path() / "plan.json")) {
      const std::string json_path = (csv.parent_path() / "plan.json").string();
      out << " (plans: [" << json_path << "](" << json_path << "))";
    }
    out << "\n";
  }
  link_if_exists(out, directory, "manifest.json", "experiment, baseline, systems and points");
  link_if_exists(out, directory, "env.json", "machine, library versions and run settings");
  link_if_exists(out, directory, "spec.yaml", "the spec as run (after --quick and --set)");

  out << "\n## Figures\n\n";
  const json figures = figure_index(directory);
  if (figures.empty()) {
    out << "No figures yet: `harness plot <folder>` draws them into plots/.\n";
  }
  for (const auto& figure : figures) {
    const std::string title = figure.value("title", "");
    const std::string png = figure.value("png", "");
    out << "### " << title << "\n\n![" << title << "](" << png << ")\n\n";
    std::vector<std::string> links;
    for (const char* key : {"svg", "data", "script"}) {
      if (figure.contains(key)) {
        const std::string file = figure[key].get<std::string>();
        links.push_back(std::string("[") + key + "](" + file + ")");
      }
    }
    if (!links.empty()) {
      out << "Files:";
      for (const auto& link : links) out << " " << link;
      out << "\n\n";
    }
  }

  if (train) {
    out << "## Points\n\n| id | point | world size | repeats | iterations | warm-up | raw "
           "samples |\n|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& point : manifest.points) {
      const std::string raw = "raw/" + point.id + "/";
      out << "| " << point.id << " | " << point.label << " | " << point.world_size << " | "
          << point.repeats << " | " << point.iterations << " | " << point.warmup << " | [" << raw
          << "](" << raw << ") |\n";
    }
    out << "\nSystems:";
    for (const auto& system : manifest.systems) {
      out << " " << system.name << (system.name == manifest.baseline ? " (baseline)" : "") << ";";
    }
    out << "\n";
  }
  return out.str();
}

int run_report(const fs::path& directory, std::ostream& out) {
  if (!fs::is_directory(directory)) {
    throw InputError(directory.string() + ": no such results folder");
  }
  const bool train = fs::exists(directory / "manifest.json");
  if (!train && find_files(directory, "plan.csv").empty()) {
    throw InputError(directory.string() +
                     ": not a results folder (no manifest.json and no plan.csv)");
  }
  if (train) {
    write_summary_files(directory);
    out << "rebuilt " << (directory / "summary.json").string() << ", table.md, table.csv\n";
  }
  write_file_atomic(directory / "report.md", render_report_index(directory));
  out << "wrote " << (directory / "report.md").string() << "\n";
  return 0;
}

void add_report_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "report", "Rebuild summary.json and the tables from the raw samples; write report.md");
  sub->footer("Example:\n  harness report results/quickstart/<stamp>");
  auto directory = std::make_shared<std::string>();
  sub->add_option("results_dir", *directory, "Results folder of `harness run`")->required();
  sub->callback([directory]() { run_report(*directory, std::cout); });
}

}  // namespace harness
