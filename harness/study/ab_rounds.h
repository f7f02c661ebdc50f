// `harness ab`'s runs: a baseline build and a candidate build run the same spec in turns on
// this machine, so that drift of the machine (its load, clock, temperature) falls on both
// sides alike. Round r runs base then new when r is even, new then base when it is odd
// (A B B A A B ...): a drift that is linear in time then cancels between the sides, where
// A B A B would hand one side a bias of half a round's drift.
#pragma once

#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace harness {

struct AbRequest {
  std::string spec;
  std::filesystem::path base_program;  // the baseline build's harness executable
  std::filesystem::path new_program;   // the candidate build's
  long long rounds = 10;
  long long first_round = 0;          // rounds already run (harness ab --until-resolved adds more)
  std::vector<std::string> sets;      // --set for both sides
  std::vector<std::string> new_sets;  // --set for the new side only
  std::filesystem::path out;          // holds base/, new/ and logs/; made by the caller
};

// A build folder holding `harness`, or the executable itself; throws InputError when neither.
std::filesystem::path harness_program(const std::string& build, const std::string& option);

// What the checks learnt that the rounds reuse: each side's rank program's answers (the text of
// its answers file, harness/launch/rank_answers_file.h), "" where it was asked nothing.
struct AbChecked {
  std::map<std::string, std::string> rank_answers;  // by side: "base" | "new"
};

// Both builds read the spec with their own overrides (`run --dry-run`): bad input is refused
// before anything runs or is written. Throws InputError with the build's own error lines.
AbChecked check_ab_spec(const AbRequest& request);

// Writes the checks' answers where the first round reads them (request.out made).
void keep_checked_answers(const AbRequest& request, const AbChecked& checked);

// Runs rounds first_round to rounds - 1 into request.out/base and request.out/new, each study's
// output in request.out/logs/, and each side's rank program's answers in
// request.out/<side>.rank_answers.json (asked in its first round, given to the rounds after it; a
// build too old to read the file asks again). Returns 0 when every study finished, else the exit
// code of the first that did not (1 a failed run, 2 bad input, 130 interrupted), having stopped
// there.
int run_ab_rounds(const AbRequest& request, std::ostream& progress);

}  // namespace harness
