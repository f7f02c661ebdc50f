// What a CPU process's heap does with memory it frees. glibc's default returns large freed
// blocks to the OS (munmap, trimming the heap top), so the next iteration faults the same
// pages in again, and a run's iteration time depends on which way the allocator's adaptive
// thresholds happened to settle. Torch-free.
#pragma once

#include <map>
#include <string>

namespace runtime {

// "retain" (the harness's default): freed memory stays in the heap for reuse -- every block
// comes from the heap (none is mapped on its own, which free() would unmap), whose top is never
// trimmed -- as a GPU framework's caching allocator keeps device memory. "system": glibc's
// defaults. Applies to this process; throws std::invalid_argument on another name or when glibc
// refuses a setting.
void apply_heap_policy(const std::string& policy);

// The same policy for a process the harness does not build (an external system), as glibc's
// MALLOC_*_ environment variables; empty for "system".
std::map<std::string, std::string> heap_policy_environment(const std::string& policy);

}  // namespace runtime
