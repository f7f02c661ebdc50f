// A test hook: HARNESS_FAULT="rank=1,kind=crash|hang|exit,iteration=3[,run=TEXT]" makes that
// rank abort, hang forever, or exit with code 3 at the start of that iteration (counting
// warm-up from 0), in runs whose output folder contains TEXT (every run when absent).
// Used by the fault tests to check that the harness detects dead and hung ranks.
#pragma once

#include <optional>
#include <string>

namespace runtime {

struct Fault {
  int rank = -1;
  std::string kind;
  long long iteration = 0;
  std::string run;  // substring of the run's output folder; empty: any run
};

// Parses the variable's value; nullopt when unset or empty. Throws on a malformed value.
std::optional<Fault> parse_fault(const char* text);

// Carries out `fault` if it targets this rank and iteration.
void maybe_inject_fault(const std::optional<Fault>& fault, const std::string& run_directory,
                        int rank, long long iteration);

}  // namespace runtime
