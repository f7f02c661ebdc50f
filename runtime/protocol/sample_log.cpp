#include "runtime/protocol/sample_log.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace runtime {

std::string SampleLog::to_csv() const {
  std::string out = "iteration,forward_ms,backward_ms,step_ms,iteration_ms\n";
  char line[256];
  for (const auto& s : samples_) {
    std::snprintf(line, sizeof line, "%lld,%.6f,%.6f,%.6f,%.6f\n", s.iteration, s.forward_ms,
                  s.backward_ms, s.step_ms, s.iteration_ms);
    out += line;
  }
  return out;
}

void SampleLog::write(const std::filesystem::path& path) const {
  write_text_atomic(path, to_csv());
}

void write_text_atomic(const std::filesystem::path& path, const std::string& text) {
  const auto temporary =
      path.parent_path() / ("." + path.filename().string() + ".tmp." + std::to_string(getpid()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + temporary.string());
  }
  std::filesystem::rename(temporary, path);
}

}  // namespace runtime
