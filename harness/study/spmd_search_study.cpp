#include "harness/study/spmd_search_study.h"

#include <filesystem>
#include <sstream>

#include "common/atomic_file.h"
#include "common/json_file.h"
#include "common/statistics.h"
#include "common/text_util.h"
#include "harness/spec/spmd_search_spec.h"
#include "harness/study/spmd_search_run.h"
#include "planner/report/spmd_report.h"
#include "planner/spmd/noise_study.h"
#include "runtime/models/model_catalog.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// One column of Table IV: a noise level or a communication scale, every seed's outcome.
struct NoiseCell {
  std::string column;  // "10%", "comm x0.5"
  spmd::SpmdNoise noise;
  std::vector<spmd::NoisySearch> outcomes;
};

struct NoiseRow {
  const SearchedModel* model = nullptr;
  size_t operators = 0;
  double noise_free_s = 0;  // the strategy the true inputs give
  std::vector<NoiseCell> cells;
};

struct SearchTimePoint {
  long long depth = 0, ranks = 0;
  size_t operators = 0;
  int64_t states = 0;
  std::vector<double> search_ms;  // one per repeat
};

SpmdSearch search_model(const SearchedModel& searched, const SpmdSearchSpec& spec) {
  const auto shape = zoo_transformer_shape(spmd_model_of(searched.model, searched.global_batch));
  return run_spmd_search(shape, static_cast<int>(searched.ranks), spec.comm, spec.gflops);
}

// The noise study's columns: each level on FLOPs and bandwidths alike, then each scale.
std::vector<NoiseCell> noise_columns(const NoiseTable& table) {
  std::vector<NoiseCell> cells;
  for (double level : table.levels_percent) {
    cells.push_back({format_number(level) + "%", {level / 100, level / 100, 1.0}, {}});
  }
  for (double scale : table.comm_scales) {
    cells.push_back({"comm x" + format_number(scale), {0.0, 0.0, scale}, {}});
  }
  return cells;
}

std::vector<NoiseRow> run_noise_table(const SpmdSearchSpec& spec, const NoiseTable& table) {
  std::vector<NoiseRow> rows;
  for (const SearchedModel& model : table.models) {
    const SpmdSearch search = search_model(model, spec);
    NoiseRow row{&model, search.graph.operators.size(), search.found.seconds, noise_columns(table)};
    for (NoiseCell& cell : row.cells) {
      cell.outcomes =
          spmd::noise_study(search.graph, search.inputs.costs, cell.noise,
                            static_cast<int>(table.seeds), static_cast<uint64_t>(table.first_seed));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

SearchTimePoint time_search(const SpmdSearchSpec& spec, SearchedModel model, long long repeats) {
  SearchTimePoint point{
      runtime::transformer_depth(model.model.name, model.model.depth), model.ranks, 0, 0, {}};
  for (long long k = 0; k < repeats; ++k) {
    const SpmdSearch search = search_model(model, spec);
    point.operators = search.graph.operators.size();
    point.states = search.found.states;
    point.search_ms.push_back(search.search_ms);
  }
  return point;
}

// Figure 12's points: each depth at the model's ranks, then each number of ranks at its depth.
std::vector<SearchTimePoint> run_search_time(const SpmdSearchSpec& spec,
                                             const SearchTimeFigure& figure) {
  std::vector<SearchTimePoint> points;
  for (long long depth : figure.depths) {
    SearchedModel model = figure.model;
    model.model.depth = depth;
    points.push_back(time_search(spec, model, figure.repeats));
  }
  for (long long ranks : figure.ranks) {
    SearchedModel model = figure.model;
    model.ranks = ranks;
    points.push_back(time_search(spec, model, figure.repeats));
  }
  return points;
}

std::string noise_markdown(const NoiseTable& table, const std::vector<NoiseRow>& rows) {
  std::ostringstream md;
  md << "Mean over " << table.seeds << " seeds (from " << table.first_seed
     << ") of the strategy found on noisy inputs, priced on the true ones, over the noise-free "
        "strategy's time (1 = as fast).\n\n| model | ranks | operators | noise-free s |";
  std::string rule = "|---|---:|---:|---:|";
  for (const NoiseCell& cell : rows.front().cells)
    md << " " << cell.column << " |", rule += "---:|";
  md << "\n" << rule << "\n";
  for (const NoiseRow& row : rows) {
    md << "| " << row.model->label << " | " << row.model->ranks << " | " << row.operators << " | "
       << format_fixed(row.noise_free_s, 3) << " |";
    for (const NoiseCell& cell : row.cells) {
      md << " " << format_fixed(spmd::mean_relative(cell.outcomes), 4) << " |";
    }
    md << "\n";
  }
  return md.str();
}

json noise_document(const SpmdSearchSpec& spec, const std::vector<NoiseRow>& rows) {
  json models = json::array();
  for (const NoiseRow& row : rows) {
    json cells = json::array();
    for (const NoiseCell& cell : row.cells) {
      json entry = spmd::noise_json(cell.noise, cell.outcomes);
      entry["column"] = cell.column;
      cells.push_back(std::move(entry));
    }
    models.push_back({{"label", row.model->label},
                      {"model", row.model->model.name},
                      {"ranks", row.model->ranks},
                      {"global_batch", row.model->global_batch},
                      {"operators", row.operators},
                      {"noise_free_s", row.noise_free_s},
                      {"cells", cells}});
  }
  return {{"comm", spec.comm}, {"gflops_per_rank", spec.gflops}, {"models", models}};
}

std::string search_time_markdown(const SearchTimeFigure& figure,
                                 const std::vector<SearchTimePoint>& points) {
  std::ostringstream md;
  md << figure.model.label << ": the median of " << figure.repeats
     << " searches.\n\n| blocks | ranks | operators | states | search ms |\n"
        "|---:|---:|---:|---:|---:|\n";
  for (const SearchTimePoint& p : points) {
    md << "| " << p.depth << " | " << p.ranks << " | " << p.operators << " | " << p.states << " | "
       << format_fixed(percentile(p.search_ms, 50), 3) << " |\n";
  }
  return md.str();
}

json search_time_document(const SearchTimeFigure& figure,
                          const std::vector<SearchTimePoint>& points) {
  json rows = json::array();
  for (const SearchTimePoint& p : points) {
    rows.push_back({{"depth", p.depth},
                    {"ranks", p.ranks},
                    {"operators", p.operators},
                    {"states", p.states},
                    {"search_ms_median", percentile(p.search_ms, 50)},
                    {"search_ms", p.search_ms}});
  }
  return {{"label", figure.model.label},
          {"model", figure.model.model.name},
          {"repeats", figure.repeats},
          {"points", rows}};
}

void print_plan(const SpmdSearchSpec& spec, bool dry_run, std::ostream& out) {
  out << "experiment " << spec.name << ": kind spmd_search";
  if (spec.noise) {
    out << ", noise: " << spec.noise->models.size() << " model(s) x "
        << spec.noise->levels_percent.size() + spec.noise->comm_scales.size() << " column(s) x "
        << spec.noise->seeds << " seed(s)";
  }
  if (spec.search_time) {
    out << ", search_time: " << spec.search_time->depths.size() + spec.search_time->ranks.size()
        << " point(s) x " << spec.search_time->repeats << " search(es)";
  }
  out << (dry_run ? "; nothing is launched\n" : "\n");
}

}  // namespace

int run_spmd_search_spec(const std::string& spec_path, YAML::Node root,
                         const std::vector<std::string>& overrides, bool quick, bool dry_run,
                         std::ostream& out) {
  const SpmdSearchSpec spec = read_spmd_search_spec(spec_path, root, overrides, quick);
  print_plan(spec, dry_run, out);
  if (dry_run) return 0;
  std::vector<NoiseRow> noise_rows;
  std::vector<SearchTimePoint> time_points;
  if (spec.noise) noise_rows = run_noise_table(spec, *spec.noise);
  if (spec.search_time) time_points = run_search_time(spec, *spec.search_time);

  const fs::path directory = start_results_folder(spec.output, spec.name, spec.resolved);
  out << "results: " << directory.string() << "\n";
  if (spec.noise) {
    const std::string md = noise_markdown(*spec.noise, noise_rows);
    write_file_atomic(directory / "noise.md", md);
    write_file_atomic(directory / "noise.json",
                      json_text(noise_document(spec, noise_rows), 1) + "\n");
    out << "\n## Table IV: noise\n\n" << md;
  }
  if (spec.search_time) {
    const std::string md = search_time_markdown(*spec.search_time, time_points);
    write_file_atomic(directory / "search_time.md", md);
    write_file_atomic(directory / "search_time.json",
                      json_text(search_time_document(*spec.search_time, time_points), 1) + "\n");
    out << "\n## Figure 12: search time\n\n" << md;
  }
  return 0;
}

}  // namespace harness
