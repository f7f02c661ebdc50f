#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/text_util.h"
#include "harness/plot/figures.h"
#include "harness/plot/style.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

struct Strategy {
  const char* column;
  const char* title;
};
constexpr Strategy kStrategies[] = {{"dp_no_overlap", "data parallel, no overlap"},
                                    {"dp_p3", "data parallel, P3 overlap"},
                                    {"dp_overlap", "data parallel, overlap"},
                                    {"best_hybrid", "DAPPLE hybrid (best plan)"}};

// A speedup cell: the planner writes a number, or text when no plan exists.
std::string cell_number(const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size() && std::isfinite(value)) return data_number(value);
  } catch (const std::exception&) {
  }
  return "NaN";
}

// "2 machines x 8 GPUs" for equal machines (separators 8,16), else "GPUs 4,12,16".
std::string describe_devices(const nlohmann::json& separators) {
  std::vector<long long> ends;
  for (const auto& s : separators) ends.push_back(s.get<long long>());
  if (ends.empty()) return "";
  const long long per_machine = ends.front();
  bool equal = per_machine > 0;
  for (size_t i = 1; i < ends.size(); ++i) equal &= ends[i] - ends[i - 1] == per_machine;
  if (equal) {
    return std::to_string(ends.size()) + (ends.size() == 1 ? " machine" : " machines") + " x " +
           std::to_string(per_machine) + (per_machine == 1 ? " GPU" : " GPUs");
  }
  std::vector<std::string> text;
  for (long long e : ends) text.push_back(std::to_string(e));
  return "machine boundaries at GPU " + join(text, ",");
}

// Panel title: where the plan.csv sits in a `kind: plan` folder (model / layout / mode), and
// what plan.json says about the devices.
std::string panel_title(const fs::path& directory, const fs::path& csv) {
  std::string where;
  for (const auto& part : fs::relative(csv.parent_path(), directory)) {
    if (part != ".") where += (where.empty() ? "" : " / ") + part.string();
  }
  const fs::path json_path = csv.parent_path() / "plan.json";
  std::string detail;
  if (fs::exists(json_path)) {
    try {
      const auto plan = parse_json(read_file(json_path));
      if (where.empty() && plan.contains("profile")) {
        where = fs::path(plan["profile"].get<std::string>()).parent_path().filename().string();
      }
      // The mode, unless the folder path names it already (`kind: plan` with both modes).
      const std::string mode = plan.value("mode", "");
      if (!mode.empty() && where.find(mode) == std::string::npos) detail = mode + " mode";
      if (plan.contains("devices")) {
        const std::string devices =
            describe_devices(plan["devices"].value("separators", nlohmann::json::array()));
        detail += (detail.empty() ? "" : ", ") + devices;
      }
    } catch (const std::exception&) {
      detail.clear();  // the figure does not need plan.json; its title just says less
    }
  }
  if (where.empty()) where = "plan";
  return detail.empty() ? where : where + ": " + detail;
}

}  // namespace

FigureSet planner_figures(const fs::path& directory, const std::string& experiment) {
  FigureSet set;
  std::vector<fs::path> files;
  if (fs::is_directory(directory)) {
    for (const auto& entry : fs::recursive_directory_iterator(directory)) {
      if (entry.is_regular_file() && entry.path().filename() == "plan.csv") {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    set.unfit =
        "no plan.csv in the folder (planner results: `harness plan --out` or a "
        "`kind: plan` spec)";
    return set;
  }
  std::ostringstream data;
  data << "# " << experiment << ": DAPPLE planner estimated speedup over one GPU vs global "
       << "batch size\n# one block per plan.csv (gnuplot index 0, 1, ...), blocks separated by "
          "two blank lines; NaN: no plan\n# columns: gbs";
  for (const auto& strategy : kStrategies) data << " " << strategy.column;
  data << "\n";
  std::ostringstream panels;
  double min_gbs = 0, max_gbs = 0;
  for (size_t k = 0; k < files.size(); ++k) {
    const std::string text = read_file(files[k]);
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    const auto header = split(line, ',');
    std::vector<size_t> columns;
    for (const char* name : {"gbs", "dp_no_overlap", "dp_p3", "dp_overlap", "best_hybrid"}) {
      auto it = std::find(header.begin(), header.end(), name);
      if (it == header.end()) {
        throw InputError(files[k].string() + ":1: not a planner plan.csv (no column '" + name +
                         "')");
      }
      columns.push_back(static_cast<size_t>(it - header.begin()));
    }
    data << (k ? "\n\n" : "") << "# block " << k << ": " << panel_title(directory, files[k]) << " ("
         << fs::relative(files[k], directory).string() << ")\n";
    for (int number = 2; std::getline(lines, line); ++number) {
      if (line.empty()) continue;
      const auto fields = split(line, ',');
      if (fields.size() < header.size()) {
        throw InputError(files[k].string() + ":" + std::to_string(number) + ": expected " +
                         std::to_string(header.size()) + " fields");
      }
      const std::string gbs = cell_number(fields[columns[0]]);
      if (gbs == "NaN") {
        throw InputError(files[k].string() + ":" + std::to_string(number) +
                         ": global batch size is not a number");
      }
      const double value = std::stod(gbs);
      min_gbs = min_gbs == 0 ? value : std::min(min_gbs, value);
      max_gbs = std::max(max_gbs, value);
      data << gbs;
      for (size_t c = 1; c < columns.size(); ++c) data << " " << cell_number(fields[columns[c]]);
      data << "\n";
    }
    panels << "set title " << gnuplot_string(panel_title(directory, files[k])) << "\n"
           << "plot";
    for (size_t s = 0; s < std::size(kStrategies); ++s) {
      panels << (s ? ", \\\n     " : " ") << "datafile index " << k << " using 1:" << s + 2
             << " with linespoints lw 2 pt " << 5 + 2 * s << " ps 0.6 lc " << series_color(s)
             << " title " << gnuplot_string(kStrategies[s].title);
    }
    panels << "\n";
  }
  const size_t n = files.size();
  const size_t columns = n == 1 ? 1 : (n <= 4 ? 2 : 3);
  const size_t rows = (n + columns - 1) / columns;
  Figure figure;
  figure.kind = "planner";
  figure.stem = "planner_speedup";
  figure.title = experiment + ": planner estimated speedup vs global batch size";
  figure.width = n == 1 ? 1000 : static_cast<int>(columns) * 680;
  figure.height = n == 1 ? 650 : static_cast<int>(rows) * 480 + 70;
  std::string panel_commands = panels.str();
  if (!panel_commands.empty() && panel_commands.back() == '\n') panel_commands.pop_back();
  figure.fields = {{"rows", std::to_string(rows)},
                   {"columns", std::to_string(columns)},
                   {"title", gnuplot_string(experiment + ": DAPPLE planner, estimated speedup "
                                                         "over one GPU vs global batch size")},
                   {"xrange", "[" + data_number(min_gbs) + ":" + data_number(max_gbs) + "]"},
                   {"panels", panel_commands}};
  figure.data = data.str();
  set.figures.push_back(std::move(figure));
  return set;
}

}  // namespace harness
