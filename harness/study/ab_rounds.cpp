#include "harness/study/ab_rounds.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/child_process.h"
#include "common/input_error.h"
#include "common/text_util.h"
#include "harness/launch/supervised_process.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

struct Side {
  const char* name;  // "base" | "new"
  const fs::path* program;
};

std::vector<std::string> run_arguments(const AbRequest& request, const Side& side,
                                       const fs::path& output, bool dry_run) {
  std::vector<std::string> args{"run", request.spec, "--set", "output=" + output.string()};
  const bool is_new = std::string(side.name) == "new";
  for (const auto& set : request.sets) args.insert(args.end(), {"--set", set});
  if (is_new) {
    for (const auto& set : request.new_sets) args.insert(args.end(), {"--set", set});
  }
  if (dry_run) args.push_back("--dry-run");
  return args;
}

// The side's rank program's answers, kept from round to round (harness/launch/rank_answers_file.h).
fs::path rank_answers_file(const AbRequest& request, const Side& side) {
  return request.out / (std::string(side.name) + ".rank_answers.json");
}

// The first lines of a build's refusal, without its own "error: " prefixes.
std::string refusal_of(const std::string& side, const std::string& stderr_text) {
  std::string lines;
  for (std::string line : split(stderr_text, '\n')) {
    if (line.empty()) continue;
    if (line.rfind("error: ", 0) == 0) line = line.substr(7);
    lines += (lines.empty() ? "" : "\n") + side + " build: " + line;
  }
  return lines.empty() ? side + " build: `run --dry-run` failed without a message" : lines;
}

// A build that is not the harness (a typo naming another program) is refused before either
// side runs: `--version` must answer as build_description() writes it.
void check_is_harness(const Side& side) {
  const CapturedOutput version = run_captured(side.program->string(), {"--version"});
  const std::string first_line = version.out.substr(0, version.out.find('\n'));
  if (version.exit_code != 0 || first_line.rfind("harness ", 0) != 0) {
    throw InputError("--" + std::string(side.name) + ": " + side.program->string() +
                     " is not a harness executable (its --version exited " +
                     std::to_string(version.exit_code) + " and printed '" +
                     first_line.substr(0, 80) + "')");
  }
}

}  // namespace

fs::path harness_program(const std::string& build, const std::string& option) {
  const fs::path path = fs::is_directory(build) ? fs::path(build) / "harness" : fs::path(build);
  if (!fs::is_regular_file(path) || ::access(path.c_str(), X_OK) != 0) {
    throw InputError(option + ": no harness executable at " + path.string() +
                     " (give a build folder holding one, or the executable)");
  }
  return fs::absolute(path);
}

AbChecked check_ab_spec(const AbRequest& request) {
  const Side sides[] = {{"base", &request.base_program}, {"new", &request.new_program}};
  for (const Side& side : sides) check_is_harness(side);
  // What the rank programs answer here is kept for the first round, outside --out until both
  // builds accept the spec.
  char scratch_template[] = "/tmp/harness-ab-check-XXXXXX";
  const char* made = ::mkdtemp(scratch_template);
  if (made == nullptr) throw std::runtime_error("ab: cannot make a scratch folder in /tmp");
  const fs::path scratch(made);
  AbChecked checked;
  std::string refusal;
  for (const Side& side : sides) {
    const fs::path answers = scratch / (std::string(side.name) + ".rank_answers.json");
    ChildSpec spec;
    spec.program = side.program->string();
    spec.args = run_arguments(request, side, request.out / side.name, true);
    spec.environment = {{"HARNESS_RANK_ANSWERS", answers.string()}};
    const CapturedOutput result = run_captured(std::move(spec));
    if (result.exit_code != 0) {
      refusal = refusal_of(side.name, result.err);
      break;
    }
    checked.rank_answers[side.name] = read_input_file(answers).value_or("");
  }
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  if (!refusal.empty()) throw InputError(refusal);
  return checked;
}

void keep_checked_answers(const AbRequest& request, const AbChecked& checked) {
  for (const auto& [side, text] : checked.rank_answers) {
    if (!text.empty()) {
      write_file_atomic(rank_answers_file(request, Side{side.c_str(), nullptr}), text);
    }
  }
}

int run_ab_rounds(const AbRequest& request, std::ostream& progress) {
  const Side base{"base", &request.base_program}, candidate{"new", &request.new_program};
  fs::create_directories(request.out / "logs");
  for (long long round = request.first_round; round < request.rounds; ++round) {
    const bool base_first = round % 2 == 0;
    progress << "ab: round " << round + 1 << "/" << request.rounds << ":";
    for (const Side& side : {base_first ? base : candidate, base_first ? candidate : base}) {
      const auto start = std::chrono::steady_clock::now();
      const fs::path log =
          request.out / "logs" / ("round" + std::to_string(round + 1) + "_" + side.name + ".log");
      // Each side's rank program answers its questions before the first round's run only.
      const SupervisedExit exit = run_supervised(
          side.program->string(), run_arguments(request, side, request.out / side.name, false), log,
          {{"HARNESS_RANK_ANSWERS", rank_answers_file(request, side).string()}});
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      char timing[64];
      std::snprintf(timing, sizeof timing, " %s %.1f s", side.name, seconds);
      progress << timing << std::flush;
      // Ctrl-C reaches the study as well as the harness: either may notice first.
      if (exit.interrupted || exit.exit_code == 130) {
        progress << "\ninterrupted: stopped the " << side.name
                 << " study; its log: " << log.string() << "\n";
        return 130;
      }
      if (exit.exit_code != 0) {
        progress << "\nab: the " << side.name << " study of round " << round + 1 << " exited "
                 << exit.exit_code << "; its log: " << log.string() << "\n";
        return exit.exit_code == 2 ? 2 : 1;
      }
    }
    progress << "\n";
  }
  return 0;
}

}  // namespace harness
