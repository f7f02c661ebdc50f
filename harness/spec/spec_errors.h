// Every error of a spec at once, the way a compiler reports a file: a reader that finds a
// wrong value records it here and reads on with a stand-in, so that a misspelt key is
// reported together with the missing key before it. Checks that relate values to each other
// (micro-batches against the batch, stages against the world) run only on values that were
// read cleanly, so that a stand-in never causes an error of its own.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/input_error.h"

namespace harness {

class SpecErrors {
 public:
  // At most this many are printed; the rest are counted.
  static constexpr size_t kMaxReported = 20;

  explicit SpecErrors(std::string file) : file_(std::move(file)) {}

  void add(const InputError& error);
  // Runs `read`, recording an InputError it throws instead of passing it on: what `read`
  // had left to read is skipped, and the caller goes on to the next part of the spec.
  void collect(const std::function<void()>& read);

  bool empty() const { return errors_.empty(); }
  size_t count() const { return errors_.size(); }

  // Throws one InputError whose message holds every recorded error, one per line, in file
  // order (errors of --set options, which have no line, first); nothing when none.
  void throw_if_any() const;

 private:
  std::string file_;
  std::vector<InputError> errors_;
  std::unordered_set<std::string> seen_;  // messages already recorded
};

}  // namespace harness
