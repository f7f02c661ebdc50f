// Wall-clock time stamps for names and records (never for measuring: that is the monotonic
// clock's job).
#pragma once

#include <string>

namespace harness {

// "20261121T233015Z" for now (UTC).
std::string utc_timestamp_compact();

}  // namespace harness
