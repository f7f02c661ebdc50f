// env.json: what a result depends on besides the spec (revision, library versions, machine).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace harness {

// Harness revision (git), CPU model, cores, hostname, compiler, time; plus `extra` (the
// worker side adds the LibTorch version).
nlohmann::json collect_environment(const std::map<std::string, std::string>& extra);

// The machine alone: hostname, CPU model, logical cores (no git, no clock: cheap to ask).
nlohmann::json machine_identity();

// This host's physical memory in bytes (what a topology file gives CPU ranks as device memory).
double physical_memory_bytes();

// This process's peak resident memory so far (VmHWM), in bytes; 0 where /proc says nothing.
long long peak_resident_bytes();

// "abc123..." (+ "-dirty" when the work tree has changes), or "unknown" outside a checkout.
std::string harness_git_revision();

}  // namespace harness
