// LibTorch 2.x records every collective in a process-wide "flight recorder" (a debugging aid
// for hung NCCL jobs), and the record of a process group's first operation inserts into a map
// outside the recorder's lock (FlightRecorder::recordWithResetEnabled, 2.11): two process
// groups of one process starting their first operations on two threads at once corrupt it
// (SIGSEGV in the tests that run ranks as threads; a rank whose two groups started on two
// threads at once would crash alike). The harness has its own hang detection, so the recorder
// is turned off unless the user asked for it; 1.13 has none and ignores the variable. Free of
// LibTorch's headers: the rank program's main, which calls it, includes no other.
#pragma once

#include <cstdlib>

namespace runtime::torch_compat {

// The recorder reads the variable once, when its first process group starts: call this before
// any thread creates one.
inline void keep_flight_recorder_off() {
  if (std::getenv("TORCH_FR_BUFFER_SIZE") == nullptr &&
      std::getenv("TORCH_NCCL_TRACE_BUFFER_SIZE") == nullptr) {
    setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0);
  }
}

}  // namespace runtime::torch_compat
