// Readers of an external program's per-iteration timings, turned into the samples the
// harness's own ranks write (iteration, forward_ms, backward_ms, step_ms, iteration_ms).
// Torch-free: they read text that a training program printed or wrote.
#pragma once

#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/text_pattern.h"

namespace harness {

// The timing fields a sample may carry, in CSV column order.
inline constexpr const char* kTimingFields[] = {"forward_ms", "backward_ms", "step_ms",
                                                "iteration_ms"};

struct TimingSample {
  std::optional<long long> iteration;    // the program's own count ("iter"), when it gives one
  std::map<std::string, double> fields;  // a subset of kTimingFields
  long long line = 0;                    // where it came from (1-based; 0 when unknown)
};

// A line (or trace event) that claims to be a sample but cannot be read as one.
struct MalformedSample {
  long long line = 0;  // 1-based; 0 when the source has no lines (a trace event)
  std::string text;    // the offending line or event, shortened
  std::string reason;
};

struct TimingRead {
  std::vector<TimingSample> samples;
  std::optional<MalformedSample> malformed;  // reading stopped here
  std::string last_line;                     // last non-empty line seen, for "what came"
};

// One JSON object per line. Lines not starting with '{' (after blanks) are the program's
// other output and are skipped; a line starting with '{' that is not a JSON object with
// numeric timing fields is malformed.
TimingRead read_jsonl_timings(std::istream& in);

// A regular expression with named groups "(?<name>...)" over the timing fields and "iter".
struct NamedRegex {
  TextPattern regex;
  std::vector<std::string> group_names;  // index i: name of capture group i+1 ("" unnamed)
};
// Rewrites the named groups to plain ones (std::regex has none) and compiles the result.
// Throws std::invalid_argument with a one-line reason.
NamedRegex compile_named_regex(const std::string& pattern);
// Every line that the regex matches (search, not full match) is one sample.
TimingRead read_regex_timings(std::istream& in, const NamedRegex& pattern);

// A Chrome / Kineto trace (a JSON array of events or {"traceEvents": [...]}): complete
// events ("ph": "X") whose name fully matches `step_name` mark iterations; the iteration
// time is their duration. Sorted by start time.
inline constexpr const char* kDefaultStepName = "ProfilerStep#[0-9]+";
TimingRead read_chrome_trace_timings(const std::string& text, const TextPattern& step_name);

// The rank CSV of the harness's workers: "iteration" then the fields the samples carry.
// iteration_ms, when no sample has it, is the sum of the phases given. Returns a reason in
// `error` (and "") when samples disagree on which fields they have.
struct SampleTable {
  std::string csv;
  std::optional<MalformedSample> error;
  bool derived_iteration = false;
};
SampleTable samples_to_csv(const std::vector<TimingSample>& samples);

}  // namespace harness
