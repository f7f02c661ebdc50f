// harness plot: every figure kind renders from a fixture results folder through gnuplot
// (PNG, SVG, data and script, non-empty), kinds that do not fit say so and draw nothing, and
// specs accept a `plots:` list.
#include "harness/cli/plot_command.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/plot/gnuplot.h"
#include "harness/plot/templates.h"
#include "harness/spec/spec.h"
#include "tests/harness/results/report_fixture.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using harness::read_file;
using harness_test::FixtureRun;
using harness_test::TempDir;
using nlohmann::json;

#define REQUIRE_GNUPLOT() \
  if (!harness_test::have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed"

// The four files of a figure exist and hold what their names say.
void expect_figure(const fs::path& plots, const std::string& stem) {
  SCOPED_TRACE(stem);
  for (const char* extension : {".png", ".svg", ".dat", ".gp"}) {
    const fs::path file = plots / (stem + extension);
    ASSERT_TRUE(fs::exists(file)) << file;
    EXPECT_GT(fs::file_size(file), 100u) << file;
  }
  EXPECT_EQ(read_file(plots / (stem + ".png")).substr(1, 3), "PNG");
  EXPECT_NE(read_file(plots / (stem + ".svg")).find("<svg"), std::string::npos);
  EXPECT_NE(read_file(plots / (stem + ".gp")).find("datafile = \"" + stem + ".dat\""),
            std::string::npos);
}

std::string plot(const fs::path& run, std::vector<std::string> kinds) {
  std::ostringstream out;
  harness::run_plots(run, kinds, out);
  return out.str();
}

// A results folder of two DDP systems over three bucket caps.
fs::path bucket_sweep_run(const TempDir& dir) {
  FixtureRun spec;
  spec.experiment = "sweep";
  spec.systems = {"overlap", "sync"};
  spec.axes = {{"ddp.bucket_mb", {"1", "5", "25"}}};
  return harness_test::write_fixture_run(dir.path(), spec);
}

TEST(Plot, BucketSweepPerPhaseWithBandAndMarks) {
  REQUIRE_GNUPLOT();
  TempDir dir;
  const fs::path run = bucket_sweep_run(dir);
  const std::string out = plot(run, {"bucket_sweep"});
  for (const char* phase : {"forward", "backward", "step", "iteration"}) {
    expect_figure(run / "plots", std::string("bucket_sweep_") + phase);
  }
  const std::string data = read_file(run / "plots" / "bucket_sweep_iteration.dat");
  // overlap at 1 MiB: ranks 10.00..10.09 and 10.10..10.19; p50 = 10.095.
  EXPECT_NE(data.find("# system 0: overlap\n1 "), std::string::npos) << data;
  EXPECT_NE(data.find("# system 1: sync\n"), std::string::npos);
  const std::string script = read_file(run / "plots" / "bucket_sweep_iteration.gp");
  EXPECT_NE(script.find("set xlabel \"bucket size cap (MiB, log scale)\""), std::string::npos);
  EXPECT_NE(script.find("set ylabel \"iteration latency (ms)\""), std::string::npos);
  EXPECT_NE(script.find("filledcurves"), std::string::npos);
  const json index = harness::parse_json(read_file(run / "plots" / "figures.json"));
  EXPECT_EQ(index.size(), 4u);
  EXPECT_EQ(index[0]["kind"], "bucket_sweep");
}

// A system's own bucket cap is where it is drawn: its config.json's system.gradients.bucket_mb,
// or system.bucket_mb in a results folder written before the description had that section.
TEST(Plot, BucketSweepDrawsASystemsOwnCapFromItsConfig) {
  REQUIRE_GNUPLOT();
  TempDir dir;
  const fs::path run = bucket_sweep_run(dir);
  harness::write_file_atomic(run / "raw" / "p000" / "overlap" / "rep0" / "config.json",
                             R"({"system": {"name": "overlap", "gradients": {"bucket_mb": 50}}})");
  harness::write_file_atomic(run / "raw" / "p000" / "sync" / "rep0" / "config.json",
                             R"({"system": {"name": "sync", "bucket_mb": 70}})");
  plot(run, {"bucket_sweep"});
  const std::string data = read_file(run / "plots" / "bucket_sweep_iteration.dat");
  EXPECT_NE(data.find("# system 0: overlap\n5 "), std::string::npos) << data;
  EXPECT_NE(data.find("\n50 "), std::string::npos) << data;
  EXPECT_NE(data.find("\n70 "), std::string::npos) << data;
}

// Any other numeric axis gets the same figure (`sweep`): one set per axis, split by the other
// axes' values; a non-numeric axis (a schedule's name) draws none of its own.
TEST(Plot, SweepDrawsEveryOtherNumericAxis) {
  REQUIRE_GNUPLOT();
  TempDir dir;
  FixtureRun spec;
  spec.experiment = "bandwidth";
  spec.systems = {"ddp", "dapple"};
  spec.axes = {{"cluster.inter_bandwidth", {"1e9", "4e9", "16e9"}},
               {"pipeline.schedule", {"gpipe", "dapple"}}};
  const fs::path run = harness_test::write_fixture_run(dir.path(), spec);
  const std::string out = plot(run, {"sweep"});
  for (const char* group : {"_1", "_2"}) {
    expect_figure(run / "plots", std::string("sweep_cluster_inter_bandwidth_iteration") + group);
  }
  EXPECT_FALSE(fs::exists(run / "plots" / "sweep_pipeline_schedule_iteration_1.png"));
  const std::string data =
      read_file(run / "plots" / "sweep_cluster_inter_bandwidth_iteration_1.dat");
  EXPECT_NE(data.find("# columns: cluster.inter_bandwidth p10_ms p50_ms p90_ms p99_ms n"),
            std::string::npos)
      << data;
  // The three bandwidths in order, each with the p10 and p50 of the fixture's 20 samples there
  // (10.00..10.19 ms at the first: p10 10.019, p50 10.095, linear interpolation).
  EXPECT_NE(data.find("# system 0: ddp\n1e+09 10.019 10.094999999999999 "), std::string::npos)
      << data;
  EXPECT_NE(data.find("\n4e+09 12.019 "), std::string::npos) << data;
  EXPECT_NE(data.find("\n1.6e+10 14.019 "), std::string::npos) << data;
  const std::string script =
      read_file(run / "plots" / "sweep_cluster_inter_bandwidth_iteration_1.gp");
  EXPECT_NE(script.find("set xlabel \"cluster.inter_bandwidth (log scale)\""), std::string::npos);
  // Without a numeric axis, the kind does not fit and says so.
  FixtureRun names = spec;
  names.axes = {{"pipeline.schedule", {"gpipe", "dapple"}}};
  const fs::path other = harness_test::write_fixture_run(dir.path() / "names", names);
  EXPECT_NE(
      plot(other, {"sweep"})
          .find("plot sweep: does not fit " + other.string() + ": the sweep has no numeric axis"),
      std::string::npos);
}

// Emulated machines at several link rates (`bandwidth`): latency against the rate in Mbit/s,
// and the iteration's speedup over each system's slowest level; the manifest's cluster says
// which points have a link.
TEST(Plot, BandwidthDrawsLatencyAndSpeedupAgainstTheLinkRate) {
  REQUIRE_GNUPLOT();
  TempDir dir;
  FixtureRun spec;
  spec.experiment = "levels";
  spec.systems = {"ddp", "dapple"};
  spec.axes = {{"cluster.network.inter_machine.bandwidth", {"100mbit", "1gbit", "10gbit"}}};
  // ddp halves its time at each level (120, 60, 30 ms), dapple stays at 50 ms; + 0.001 ms per
  // iteration, so every p50 is the level's time + 0.0045 (iterations 0..9, both ranks).
  spec.sample = [](size_t point, size_t system, long long, long long iteration) {
    return (system == 0 ? 120.0 / (1 << point) : 50.0) + 0.001 * static_cast<double>(iteration);
  };
  const fs::path run = harness_test::write_fixture_run(dir.path(), spec);
  const std::string out = plot(run, {"bandwidth"});
  for (const char* phase : {"forward", "backward", "step", "iteration"}) {
    expect_figure(run / "plots", std::string("bandwidth_") + phase);
  }
  expect_figure(run / "plots", "bandwidth_speedup_iteration");
  EXPECT_FALSE(fs::exists(run / "plots" / "bandwidth_speedup_forward.png"));
  const std::string latency = read_file(run / "plots" / "bandwidth_iteration.dat");
  EXPECT_NE(latency.find("# system 0: ddp\n100 120.00"), std::string::npos) << latency;
  EXPECT_NE(latency.find("\n10000 30.00"), std::string::npos) << latency;
  const std::string speedup = read_file(run / "plots" / "bandwidth_speedup_iteration.dat");
  // Columns: Mbit/s, p50_first/p90, p50_first/p50, p50_first/p10, p50_first/p99, n.
  const auto row = [&](const std::string& system, double mbit) {
    std::istringstream lines(speedup.substr(speedup.find("# system " + system)));
    std::string line;
    std::getline(lines, line);  // the block's header
    while (std::getline(lines, line) && !line.empty()) {
      std::istringstream fields(line);
      std::vector<double> values;
      for (double v; fields >> v;) values.push_back(v);
      if (values.size() == 6 && values[0] == mbit) return values;
    }
    return std::vector<double>{};
  };
  ASSERT_EQ(row("0: ddp", 100).size(), 6u) << speedup;
  EXPECT_DOUBLE_EQ(row("0: ddp", 100)[2], 1.0);
  EXPECT_NEAR(row("0: ddp", 10000)[2], 120.0045 / 30.0045, 1e-9);
  EXPECT_NEAR(row("0: ddp", 1000)[2], 120.0045 / 60.0045, 1e-9);
  EXPECT_LT(row("0: ddp", 10000)[1], row("0: ddp", 10000)[3]);  // p90's side below p10's
  EXPECT_EQ(row("0: ddp", 10000)[5], 20);                       // samples: 2 ranks x 10
  EXPECT_DOUBLE_EQ(row("1: dapple", 10000)[2], 1.0);
  const std::string script = read_file(run / "plots" / "bandwidth_speedup_iteration.gp");
  EXPECT_NE(script.find("set xlabel \"inter-machine bandwidth (Mbit/s, log scale)\""),
            std::string::npos);
  EXPECT_NE(script.find("set ylabel \"iteration speedup (x)\""), std::string::npos);
  // Without emulated machines the kind does not fit.
  FixtureRun plain;
  plain.axes = {{"ddp.bucket_mb", {"1", "5"}}};
  const fs::path other = harness_test::write_fixture_run(dir.path() / "plain", plain);
  EXPECT_NE(plot(other, {"bandwidth"}).find("plot bandwidth: does not fit"), std::string::npos);
}

TEST(Plot, ScalingAndCdf) {
  REQUIRE_GNUPLOT();
  TempDir dir;
  FixtureRun spec;
  spec.experiment = "scale";
  spec.axes = {{"run.world_size", {"1", "2", "4"}}};
  const fs::path run = harness_test::write_fixture_run(dir.path(), spec);
  plot(run, {"scaling", "cdf"});
  expect_figure(run / "plots", "scaling");
  for (const char* point : {"p000", "p001", "p002"}) {
    expect_figure(run / "plots", std::string("cdf_") + point);
  }
  // Throughput = world size x batch 8 / mean iteration time: 4 ranks of overlap at p002 run
  // 12.00 + 0.1 r + 0.01 i ms, mean 12.195 ms -> 4 * 8 * 1000 / 12.195 = 2624.03 samples/s.
  const std::string data = read_file(run / "plots" / "scaling.dat");
  EXPECT_NE(data.find("\n4 "), std::string::npos) << data;
  EXPECT_NE(data.find(" 2624.0"), std::string::npos) << data;
  // The CDF ends at 1 for each system.
  const std::string cdf = read_file(run / "plots" / "cdf_p000.dat");
  EXPECT_NE(cdf.find(" 1\n\n\n# system 1"), std::string::npos) << cdf;
}

TEST(Plot, PlannerPanelPerPlanCsv) {
  REQUIRE_GNUPLOT();
  TempDir dir;
  fs::copy(fs::path(HARNESS_TEST_DATA) / "report" / "plan", dir.path() / "plan",
           fs::copy_options::recursive);
  const fs::path run = dir.path() / "plan";
  const std::string out = plot(run, {});  // every kind: only the planner fits
  expect_figure(run / "plots", "planner_speedup");
  const std::string script = read_file(run / "plots" / "planner_speedup.gp");
  EXPECT_NE(script.find("set multiplot layout 1,2 title \"plan_fixture: DAPPLE planner"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("resnet50 / hierarchical: dapple mode, 2 machines x 8 GPUs"),
            std::string::npos);
  EXPECT_NE(script.find("set title \"resnet50 / flat\""), std::string::npos);
  // No plan at gbs 1024 on the flat layout: a gap (NaN), not a zero.
  EXPECT_NE(read_file(run / "plots" / "planner_speedup.dat").find("1024 11.8 14.8 14.1 NaN"),
            std::string::npos);
  // Of every kind, the ones that do not fit are one closing line; by name, each says why.
  EXPECT_NE(out.find("plot: not drawn, as they do not fit this folder: bucket_sweep, sweep, "),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("plot bucket_sweep: does not fit"), std::string::npos) << out;
  EXPECT_NE(plot(run, {"bucket_sweep"})
                .find("plot bucket_sweep: does not fit " + run.string() +
                      ": not a training results folder"),
            std::string::npos);
}

TEST(Plot, KindsThatDoNotFitSaySoAndDrawNothing) {
  TempDir dir;
  FixtureRun spec;  // no sweep at all
  const fs::path run = harness_test::write_fixture_run(dir.path(), spec);
  const std::string out = plot(run, {"bucket_sweep", "scaling", "planner"});
  EXPECT_NE(out.find("plot bucket_sweep: does not fit " + run.string() +
                     ": the sweep has no axis ddp.bucket_mb with two or more values\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("plot scaling: does not fit"), std::string::npos);
  EXPECT_NE(out.find("plot planner: does not fit"), std::string::npos);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3);  // one line each
  EXPECT_FALSE(fs::exists(run / "plots"));
  EXPECT_THROW(plot(run, {"histogram"}), harness::InputError);
  EXPECT_THROW(plot(dir.path() / "missing", {}), harness::InputError);
}

// Points HARNESS_PLOTS_DIR at a copy of plots/ for the life of the test.
class PlotTemplatesCopy {
 public:
  PlotTemplatesCopy() {
    fs::copy(harness::plot_templates_dir(), dir_.path() / "plots");
    setenv("HARNESS_PLOTS_DIR", (dir_.path() / "plots").c_str(), 1);
  }
  ~PlotTemplatesCopy() { unsetenv("HARNESS_PLOTS_DIR"); }
  void write(const std::string& name, const std::string& text) {
    harness::write_file_atomic(dir_.path() / "plots" / (name + ".gp"), text);
  }
  std::string read(const std::string& name) {
    return read_file(dir_.path() / "plots" / (name + ".gp"));
  }

 private:
  TempDir dir_;
};

harness::Figure cdf_figure() {
  harness::Figure figure;
  figure.kind = "cdf";
  figure.stem = "cdf_p000";
  figure.title = "demo: CDF";
  figure.fields = {{"title", "\"demo\""}, {"plot", "plot datafile using 1:2 with steps"}};
  return figure;
}

TEST(Plot, ScriptIsTheKindsTemplateInsideTheFrame) {
  const std::string script = harness::gnuplot_script(cdf_figure());
  EXPECT_EQ(script.rfind("# cdf_p000.gp: demo: CDF\n", 0), 0u) << script;
  EXPECT_NE(script.find("set output \"cdf_p000.\" . format\n  reset\n  set title \"demo\"\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("  set key bottom right box opaque\n  plot datafile using 1:2 with "
                        "steps\n  set output\n}\n"),
            std::string::npos)
      << script;
  EXPECT_EQ(script.find("##"), std::string::npos) << "template notes leak into the script";
  EXPECT_EQ(script.find("{{"), std::string::npos);
}

TEST(Plot, EditingATemplateRestylesEveryFigureOfItsKind) {
  PlotTemplatesCopy templates;
  std::string cdf = templates.read("cdf");
  const auto at = cdf.find("set key bottom right box opaque");
  ASSERT_NE(at, std::string::npos);
  cdf.replace(at, std::string("set key bottom right box opaque").size(), "set key top left");
  templates.write("cdf", cdf);
  const std::string script = harness::gnuplot_script(cdf_figure());
  EXPECT_NE(script.find("  set key top left\n"), std::string::npos) << script;
  EXPECT_EQ(script.find("bottom right"), std::string::npos);
}

TEST(Plot, AnUnknownPlaceholderNamesTheTemplateLine) {
  PlotTemplatesCopy templates;
  templates.write("cdf", "## notes\nset title {{title}}\nset xlabel {{x_label}}\n");
  try {
    harness::gnuplot_script(cdf_figure());
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string expected = "cdf.gp:3: unknown placeholder {{x_label}}";
    const std::string message = e.what();
    EXPECT_EQ(message.substr(message.size() - expected.size()), expected) << message;
  }
}

TEST(Plot, GnuplotFailureIsReported) {
  REQUIRE_GNUPLOT();
  TempDir dir;
  PlotTemplatesCopy templates;
  templates.write("test", "{{plot}}\n");
  harness::Figure figure;
  figure.kind = "test";
  figure.stem = "broken";
  figure.data = "1 2\n";
  figure.fields = {{"plot", "plot datafile using 1:2 with nosuchstyle"}};
  try {
    harness::render_figure(figure, dir.path());
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot failed"), std::string::npos) << e.what();
  }
}

TEST(Plot, SpecPlotsKey) {
  TempDir dir;
  const std::string spec = R"(name: demo
model: {name: mlp, batch_size: 8}
run: {iterations: 3}
systems: [overlap]
plots: [bucket_sweep, cdf]
)";
  harness::LoadOptions options;
  options.known_models = {"mlp"};
  const auto experiment = harness::load_experiment(dir.write("a.yaml", spec).string(), options);
  EXPECT_EQ(experiment.plots, (std::vector<std::string>{"bucket_sweep", "cdf"}));
  try {
    harness::load_experiment(dir.write("b.yaml", spec.substr(0, spec.size() - 5) + "cfd]\n"),
                             options);
    FAIL() << "no error";
  } catch (const harness::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b.yaml:5:23: plots: unknown figure kind"),
              std::string::npos)
        << e.what();
  }
  // Absent: nothing drawn.
  EXPECT_TRUE(harness::load_experiment(
                  dir.write("c.yaml", spec.substr(0, spec.find("plots"))).string(), options)
                  .plots.empty());
}

}  // namespace
