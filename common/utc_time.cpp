#include "common/utc_time.h"

#include <chrono>
#include <ctime>

namespace harness {

std::string utc_timestamp_compact() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%SZ", &utc);
  return buffer;
}

}  // namespace harness
