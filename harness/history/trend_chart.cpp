#include "harness/history/trend_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/statistics.h"
#include "common/text_util.h"

namespace harness {

namespace {

constexpr double kWidth = 960, kHeight = 340;
constexpr double kLeft = 78, kRight = 20, kTop = 36, kBottom = 86;
constexpr size_t kMaxCommitLabels = 12;
// Above this many runs a chart draws each commit's range as one line instead of its points: the
// file stays small (10,000 circles would be about 1 MB).
constexpr size_t kMaxPoints = 4000;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// Tick values of a "nice" step (1, 2 or 5 times a power of ten) across [low, high].
std::vector<double> ticks(double low, double high) {
  const double raw = (high - low) / 5;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  double step = power;
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * power;
    if (step >= raw) break;
  }
  std::vector<double> out;
  for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step)
    out.push_back(t);
  return out;
}

class Frame {
 public:
  Frame(size_t commits, double low, double high) : commits_(commits), low_(low), high_(high) {}
  double x(double commit) const {
    const double span = std::max<double>(double(commits_) - 1, 1);
    return kLeft + (kWidth - kLeft - kRight) * (commits_ == 1 ? 0.5 : commit / span);
  }
  double y(double value) const {
    return kTop + (kHeight - kTop - kBottom) * (1 - (value - low_) / (high_ - low_));
  }

 private:
  size_t commits_;
  double low_, high_;
};

void draw_axes(std::ostringstream& svg, const Frame& frame, double low, double high,
               const std::string& unit) {
  svg << "<g font-size=\"11\" fill=\"#444\">\n";
  for (const double t : ticks(low, high)) {
    svg << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\""
        << number(frame.y(t)) << "\" y2=\"" << number(frame.y(t)) << "\" stroke=\"#e4e4e4\"/>"
        << "<text x=\"" << kLeft - 6 << "\" y=\"" << number(frame.y(t) + 4)
        << "\" text-anchor=\"end\">" << format_general(t) << "</text>\n";
  }
  svg << "<text transform=\"translate(16," << number((kTop + kHeight - kBottom) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << markup_escaped(unit) << "</text>\n</g>\n";
}

// Commits labelled below the axis: evenly spaced ones and every change point's.
void draw_commit_labels(std::ostringstream& svg, const Frame& frame, const History& history,
                        const MetricSeries& series, const SeriesAnalysis& analysis) {
  std::vector<size_t> labelled;
  const size_t n = series.commits.size();
  const size_t every = std::max<size_t>(1, (n + kMaxCommitLabels - 1) / kMaxCommitLabels);
  for (size_t i = 0; i < n; i += every) labelled.push_back(i);
  for (const SeriesChange& change : analysis.changes) labelled.push_back(change.position);
  std::sort(labelled.begin(), labelled.end());
  labelled.erase(std::unique(labelled.begin(), labelled.end()), labelled.end());
  svg << "<g font-size=\"10\" fill=\"#444\" font-family=\"monospace\">\n";
  for (const size_t i : labelled) {
    const double x = frame.x(double(i)), y = kHeight - kBottom + 8;
    svg << "<text transform=\"translate(" << number(x) << "," << number(y) << ") rotate(45)\">"
        << markup_escaped(history.commits[series.commits[i].commit].sha.substr(0, 8))
        << "</text>\n";
  }
  svg << "</g>\n";
}

void draw_levels(std::ostringstream& svg, const Frame& frame, const MetricSeries& series,
                 const SeriesAnalysis& analysis) {
  std::vector<size_t> bounds{0};
  for (const SeriesChange& change : analysis.changes) bounds.push_back(change.position);
  bounds.push_back(series.commits.size());
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    std::vector<double> runs, medians;
    for (size_t i = bounds[k]; i < bounds[k + 1]; ++i) {
      runs.insert(runs.end(), series.commits[i].runs.begin(), series.commits[i].runs.end());
      medians.push_back(analysis.medians[i]);
    }
    const double x0 = frame.x(double(bounds[k]) - (bounds[k] == 0 ? 0 : 0.5));
    const double x1 = frame.x(double(bounds[k + 1] - 1) + (k + 2 == bounds.size() ? 0 : 0.5));
    const double p10 = percentile(runs, 10), p90 = percentile(runs, 90);
    svg << "<rect class=\"band\" x=\"" << number(x0) << "\" y=\"" << number(frame.y(p90))
        << "\" width=\"" << number(std::max(x1 - x0, 1.0)) << "\" height=\""
        << number(std::max(frame.y(p10) - frame.y(p90), 1.0))
        << "\" fill=\"#9ecae1\" fill-opacity=\"0.35\"><title>p10-p90 of this level: "
        << format_general(p10) << " to " << format_general(p90) << "</title></rect>\n";
    const double level = percentile(medians, 50);
    svg << "<line x1=\"" << number(x0) << "\" x2=\"" << number(x1) << "\" y1=\""
        << number(frame.y(level)) << "\" y2=\"" << number(frame.y(level))
        << "\" stroke=\"#08519c\" stroke-width=\"2\" stroke-dasharray=\"6 3\"/>\n";
  }
}

void draw_runs(std::ostringstream& svg, const Frame& frame, const History& history,
               const MetricSeries& series, const SeriesAnalysis& analysis) {
  size_t total = 0;
  for (const CommitRuns& commit : series.commits) total += commit.runs.size();
  svg << "<g fill=\"#636363\" fill-opacity=\"0.7\" stroke=\"#636363\">\n";
  for (size_t i = 0; i < series.commits.size(); ++i) {
    const CommitRuns& commit = series.commits[i];
    const double x = frame.x(double(i));
    if (total > kMaxPoints) {
      const auto [low, high] = std::minmax_element(commit.runs.begin(), commit.runs.end());
      svg << "<line x1=\"" << number(x) << "\" x2=\"" << number(x) << "\" y1=\""
          << number(frame.y(*low)) << "\" y2=\"" << number(frame.y(*high)) << "\"/>\n";
      continue;
    }
    for (const double value : commit.runs) {
      svg << "<circle class=\"run\" cx=\"" << number(x) << "\" cy=\"" << number(frame.y(value))
          << "\" r=\"2.5\" stroke=\"none\"><title>"
          << markup_escaped(history.commits[commit.commit].sha.substr(0, 12)) << ": "
          << format_general(value) << "</title></circle>\n";
    }
  }
  svg << "</g>\n<polyline fill=\"none\" stroke=\"#08519c\" stroke-width=\"1.2\" points=\"";
  for (size_t i = 0; i < analysis.medians.size(); ++i) {
    svg << (i ? " " : "") << number(frame.x(double(i))) << ","
        << number(frame.y(analysis.medians[i]));
  }
  svg << "\"/>\n";
}

void draw_changes(std::ostringstream& svg, const Frame& frame, const SeriesAnalysis& analysis) {
  for (const SeriesChange& change : analysis.changes) {
    const double x = frame.x(double(change.position) - 0.5);
    const char* colour = change.worse ? "#cb181d" : "#238b45";
    svg << "<line class=\"change\" x1=\"" << number(x) << "\" x2=\"" << number(x) << "\" y1=\""
        << kTop << "\" y2=\"" << kHeight - kBottom << "\" stroke=\"" << colour
        << "\" stroke-width=\"2\"/><text x=\"" << number(x + 4) << "\" y=\"" << kTop + 12
        << "\" font-size=\"12\" fill=\"" << colour << "\">"
        << format_signed_percent(change.change_pct) << "</text>\n";
  }
}

}  // namespace

std::string trend_chart_svg(const History& history, const MetricSeries& series,
                            const SeriesAnalysis& analysis) {
  double low = INFINITY, high = -INFINITY;
  for (const CommitRuns& commit : series.commits) {
    for (const double value : commit.runs) low = std::min(low, value), high = std::max(high, value);
  }
  if (!(high > low)) {
    const double pad = std::max(std::fabs(low) * 0.05, 1e-9);
    low -= pad, high += pad;
  } else {
    const double pad = (high - low) * 0.08;
    low -= pad, high += pad;
  }
  const Frame frame(series.commits.size(), low, high);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kLeft << "\" y=\"20\" font-size=\"14\">"
      << markup_escaped(series.key.benchmark) << ": " << markup_escaped(series.key.metric)
      << "</text>\n";
  draw_axes(svg, frame, low, high, series.key.unit.empty() ? "count" : series.key.unit);
  draw_levels(svg, frame, series, analysis);
  draw_runs(svg, frame, history, series, analysis);
  draw_changes(svg, frame, analysis);
  draw_commit_labels(svg, frame, history, series, analysis);
  svg << "<text x=\"" << kLeft << "\" y=\"" << kHeight - 8
      << "\" font-size=\"11\" fill=\"#444\">points: runs; line: each commit's median; dashed: "
         "each level's median, shaded its p10-p90; vertical: change points (red worse, green "
         "better)</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace harness
