#include "harness/cli/history_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "common/atomic_file.h"
#include "common/identifier_checks.h"
#include "common/input_error.h"
#include "harness/analysis/compare_samples.h"
#include "harness/cli/option_checks.h"
#include "harness/history/history_check.h"
#include "harness/history/history_report.h"
#include "harness/history/history_store.h"
#include "harness/history/postgres_connection.h"
#include "harness/history/report_paths.h"
#include "harness/history/results_records.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDefaultDb = "results/history.sqlite";

struct DetectorFlags {
  double pvalue = 0.001;
  long long window = 50;
  ChangePointOptions options() const {
    check_level("--pvalue", pvalue);
    if (window < 3 || window > 100000) throw InputError("--window: expected 3 to 100000 points");
    return {size_t(window), pvalue, 0};
  }
};

void add_detector_flags(CLI::App* sub, DetectorFlags& flags) {
  sub->add_option("--pvalue", flags.pvalue,
                  "Largest p-value of a change point (Otava's max_pvalue)")
      ->capture_default_str();
  sub->add_option("--window", flags.window,
                  "Points per window of the split step (Otava's "
                  "window_len)")
      ->capture_default_str();
}

// A new SQLite history's folder is made, as `run` makes its results folder.
void prepare_db(const std::string& db) {
  if (is_postgres_uri(db)) return;
  const fs::path parent = fs::path(db).parent_path();
  if (!parent.empty()) create_output_folder(parent, "--db");
}

struct AddFlags {
  AdditionRequest request;
  std::string results, control, db = kDefaultDb;
  bool replace = false;
};

int run_add(const AddFlags& flags) {
  AdditionRequest request = flags.request;
  request.results = flags.results;
  request.control = flags.control;
  // The folder is read whole before the database is opened: bad input leaves it as it was.
  const HistoryAddition addition = addition_from_results(request);
  prepare_db(flags.db);
  HistoryStore store = open_history(flags.db, OpenIntent::write);
  store.add(addition, flags.replace);
  std::cout << "history: " << (flags.replace ? "replaced " : "added ") << addition.values.size()
            << " values of " << addition.commit.sha.substr(0, 12)
            << (addition.control_values.empty()
                    ? std::string()
                    : " and " + std::to_string(addition.control_values.size()) + " of its control")
            << " (environment " << addition.environment.key.substr(0, 8) << ") to "
            << store.description() << "\n";
  return 0;
}

struct CheckFlags {
  std::string db = kDefaultDb, threshold = "5%", out, json;
  DetectorFlags detector;
  CheckOptions options;
  long long min_commits = kDefaultMinCommitsBefore;
  long long min_runs = kDefaultMinRunsAfter;
};

int run_check(CheckFlags flags) {
  CheckOptions options = flags.options;
  options.threshold_pct = parse_threshold_percent(flags.threshold);
  options.detector = flags.detector.options();
  if (flags.min_commits < 1 || flags.min_commits > 100000) {
    throw InputError("--min-commits: expected 1 to 100000");
  }
  options.min_commits_before = size_t(flags.min_commits);
  if (flags.min_runs < 1 || flags.min_runs > 100000) {
    throw InputError("--min-runs-after: expected 1 to 100000");
  }
  options.min_runs_after = size_t(flags.min_runs);
  check_level("--alpha", options.alpha);
  if (const std::string problem = revision_name_problem(options.since);
      !options.since.empty() && !problem.empty()) {
    throw InputError("--since: " + problem + " " + std::string(kRevisionNameRule));
  }
  if (!flags.out.empty()) check_output_file(flags.out, "--out");
  if (!flags.json.empty()) check_output_file(flags.json, "--json");
  HistoryStore store = open_history(flags.db, OpenIntent::read);
  const History history = store.read();
  const CheckResult result = check_history(history, options);
  const std::string markdown = check_markdown(history, result, options);
  if (!flags.out.empty()) write_file_atomic(flags.out, markdown);
  if (!flags.json.empty()) write_file_atomic(flags.json, check_json(history, result));
  std::cout << markdown;
  return check_exit_code(result);
}

struct ReportFlags {
  std::string db = kDefaultDb;
  DetectorFlags detector;
  ReportOptions options;
};

int run_report(const ReportFlags& flags) {
  ReportOptions options = flags.options;
  options.detector = flags.detector.options();
  // The report is made beside --out, then renamed to it: that place must take files.
  check_output_place(options.out, "--out");
  HistoryStore store = open_history(flags.db, OpenIntent::read);
  const History history = store.read();
  const size_t charts = write_history_report(history, options);
  std::cout << "history: " << charts << " charts of " << history.commits.size() << " commits; open "
            << (options.out / report_index_page()).string() << "\n";
  return 0;
}

void finish(int code) {
  std::cout.flush();
  if (code != 0) throw CLI::RuntimeError(code);
}

void add_add(CLI::App* history) {
  auto* sub = history->add_subcommand("add", "Record a results folder's runs under a commit");
  auto flags = std::make_shared<AddFlags>();
  sub->add_option("results", flags->results,
                  "A results folder of harness run (or of harness "
                  "ab's base/ or new/)")
      ->required();
  sub->add_option("--commit", flags->request.commit,
                  "The commit measured (default: the revision in env.json)")
      ->check(not_empty());
  sub->add_option("--branch", flags->request.branch, "Its branch")->check(not_empty());
  sub->add_option("--commit-time", flags->request.commit_time,
                  "Its time, ISO 8601 (default: git's, else the run's start)")
      ->check(not_empty());
  sub->add_option("--machine", flags->request.machine,
                  "The machine's name in the fingerprint (default: the hostname; set it where CI "
                  "runners' names change)")
      ->check(not_empty());
  sub->add_option("--control", flags->control,
                  "A control measured in the same job: the same spec run by a reference build "
                  "(ab's base/, or a pinned build's results); check then judges the ratio to it")
      ->check(not_empty());
  sub->add_option("--db", flags->db, "SQLite file or postgresql:// URI")->capture_default_str();
  sub->add_flag("--replace", flags->replace,
                "Replace the commit's values when it is there already (else refused)");
  sub->callback([flags]() { finish(run_add(*flags)); });
}

void add_check(CLI::App* history) {
  auto* sub = history->add_subcommand(
      "check", "Find change points; exit 1 when one at or after --since is a regression");
  auto flags = std::make_shared<CheckFlags>();
  sub->add_option("--db", flags->db, "SQLite file or postgresql:// URI")->capture_default_str();
  sub->add_option("--since", flags->options.since,
                  "The first commit judged (default: the newest), a sha or a prefix of 7+")
      ->check(not_empty());
  sub->add_option("--threshold", flags->threshold, "A smaller change is not a regression")
      ->capture_default_str();
  sub->add_option("--metric", flags->options.metrics,
                  "A metric to judge (repeatable; default: iteration p50, MFU, tokens/s and the "
                  "exact counters)");
  sub->add_option("--min-commits", flags->min_commits,
                  "Commits a series needs before --since (fewer: exit 3)")
      ->capture_default_str();
  sub->add_option("--min-runs-after", flags->min_runs,
                  "Runs a worse change needs after it to be a regression (fewer: exit 3)")
      ->capture_default_str();
  sub->add_option("--alpha", flags->options.alpha, "1 - the change interval's confidence")
      ->capture_default_str();
  sub->add_option("--link", flags->options.link, "The published report's URL: rows link to it");
  sub->add_option("--out", flags->out, "Also write the Markdown here (a pull-request comment)");
  sub->add_option("--json", flags->json, "Also write the verdicts as JSON here");
  add_detector_flags(sub, flags->detector);
  sub->callback([flags]() { finish(run_check(*flags)); });
}

void add_report(CLI::App* history) {
  auto* sub = history->add_subcommand("report", "Write the history's trend pages (static HTML)");
  auto flags = std::make_shared<ReportFlags>();
  sub->add_option("--db", flags->db, "SQLite file or postgresql:// URI")->capture_default_str();
  sub->add_option("--out", flags->options.out,
                  "The site's folder (replaced when it is a "
                  "report)")
      ->required();
  sub->add_option("--title", flags->options.title, "The index's title")->capture_default_str();
  add_detector_flags(sub, flags->detector);
  sub->callback([flags]() { finish(run_report(*flags)); });
}

}  // namespace

void add_history_command(CLI::App& app) {
  auto* history = app.add_subcommand(
      "history", "Benchmark results across commits: add, check for change points, report");
  history->require_subcommand(1);
  history->footer(
      "Example (docs/history.md):\n"
      "  harness history add results/ci_regression/<stamp> --commit $(git rev-parse HEAD)\n"
      "  harness history check --threshold 5%\n"
      "  harness history report --out results/history-site");
  add_add(history);
  add_check(history);
  add_report(history);
}

}  // namespace harness
