// Per-iteration timings of one rank, written as the CSV the harness reads back:
// "iteration,forward_ms,backward_ms,step_ms,iteration_ms", measured iterations only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace runtime {

struct IterationSample {
  long long iteration = 0;  // counted from the first measured iteration
  double forward_ms = 0;
  double backward_ms = 0;  // backward plus any wait for gradient reductions
  double step_ms = 0;      // optimizer step plus zero_grad
  double iteration_ms = 0;
};

class SampleLog {
 public:
  void add(const IterationSample& sample) { samples_.push_back(sample); }
  const std::vector<IterationSample>& samples() const { return samples_; }
  std::string to_csv() const;
  void write(const std::filesystem::path& path) const;

 private:
  std::vector<IterationSample> samples_;
};

// Temporary file in the same folder, then rename: readers never see half a file.
void write_text_atomic(const std::filesystem::path& path, const std::string& text);

}  // namespace runtime
