#include "harness/spec/spec_errors.h"

#include <algorithm>

namespace harness {

void SpecErrors::add(const InputError& error) {
  // A value read once per sweep point, or a check met twice, is still one error.
  if (!seen_.insert(error.what()).second) return;
  errors_.push_back(error);
}

void SpecErrors::collect(const std::function<void()>& read) {
  try {
    read();
  } catch (const InputError& error) {
    add(error);
  }
}

void SpecErrors::throw_if_any() const {
  if (errors_.empty()) return;
  if (errors_.size() == 1) throw errors_.front();
  std::vector<const InputError*> ordered;
  for (const auto& error : errors_) ordered.push_back(&error);
  std::stable_sort(ordered.begin(), ordered.end(), [](const InputError* a, const InputError* b) {
    // No position (a --set option, the file as a whole) sorts first.
    return a->position().value_or(SourcePosition{}) < b->position().value_or(SourcePosition{});
  });
  std::string message;
  const size_t shown = std::min(ordered.size(), kMaxReported);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) message += '\n';
    message += ordered[i]->what();
  }
  if (ordered.size() > shown) {
    message += "\n" + file_ + ": " + std::to_string(ordered.size() - shown) +
               " more error(s) not shown (fix these first)";
  }
  throw InputError(message, ordered.front()->position());
}

}  // namespace harness
