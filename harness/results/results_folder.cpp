#include "harness/results/results_folder.h"

#include "common/input_error.h"
#include "common/utc_time.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace harness {

namespace fs = std::filesystem;

fs::path create_run_directory(const fs::path& output, const std::string& experiment) {
  const fs::path parent = output / experiment;
  // The output folder is the user's: one that cannot be made (under a file, read-only, in
  // /proc) is bad input, said before anything runs.
  std::error_code error;
  fs::create_directories(parent, error);
  if (error || !fs::is_directory(parent)) {
    throw InputError("output '" + output.string() + "': cannot create " + parent.string() + ": " +
                     (error ? error.message() : "not a folder"));
  }
  const std::string stamp = utc_timestamp_compact();
  for (int attempt = 1; attempt < 1000; ++attempt) {
    const fs::path candidate =
        parent / (attempt == 1 ? stamp : stamp + "-" + std::to_string(attempt));
    // mkdir fails with EEXIST instead of reusing: two harnesses never share a folder.
    if (::mkdir(candidate.c_str(), 0755) == 0) return candidate;
    if (errno != EEXIST) {
      throw InputError("output '" + output.string() + "': cannot create " + candidate.string() +
                       ": " + std::strerror(errno));
    }
  }
  throw std::runtime_error("cannot find a free results folder under " + parent.string());
}

}  // namespace harness
