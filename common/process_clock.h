// The CPU time a process has used: on a machine whose cores its neighbours share, what it
// computed rather than how long it waited for a core.
#pragma once

namespace harness {

// CPU time of this whole process (every thread's: the caller's and Gloo's), in milliseconds.
double process_cpu_ms();

}  // namespace harness
