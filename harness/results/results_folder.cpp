#include "harness/results/results_folder.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace harness {

namespace fs = std::filesystem;

std::string utc_timestamp_compact() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%SZ", &utc);
  return buffer;
}

fs::path create_run_directory(const fs::path& output, const std::string& experiment) {
  const fs::path parent = output / experiment;
  fs::create_directories(parent);
  const std::string stamp = utc_timestamp_compact();
  for (int attempt = 1; attempt < 1000; ++attempt) {
    const fs::path candidate =
        parent / (attempt == 1 ? stamp : stamp + "-" + std::to_string(attempt));
    // mkdir fails with EEXIST instead of reusing: two harnesses never share a folder.
    if (::mkdir(candidate.c_str(), 0755) == 0) return candidate;
    if (errno != EEXIST) {
      throw std::runtime_error("cannot create " + candidate.string() + ": " + std::strerror(errno));
    }
  }
  throw std::runtime_error("cannot find a free results folder under " + parent.string());
}

}  // namespace harness
