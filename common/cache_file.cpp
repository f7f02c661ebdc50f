#include "common/cache_file.h"

#include <cstdlib>

namespace harness {

std::filesystem::path cache_file(const char* variable, const char* file_name) {
  if (const char* file = std::getenv(variable); file && *file) return file;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache) {
    return std::filesystem::path(cache) / "harness" / file_name;
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "harness" / file_name;
}

}  // namespace harness
